// Validation and canonical form of workspace-relative virtual paths: refused when odd, never repaired.
import { ToolError } from './errors.ts';

export const MAX_PATH_BYTES = 4096;

export interface ParsedPath {
  /** The names from the root down, without `.`; empty for the root. */
  segments: string[];
  /** Canonical spelling: `a/b`, no leading or trailing `/`; the root is `''`. */
  path: string;
  /** The input ended with a `/` after at least one segment (`a/`, `./`). */
  trailingSlash: boolean;
}

/**
 * Checks a path as a caller sent it and returns its canonical form.
 * `''`, `/`, `.` and `./` all name the root; a leading `/` means the workspace root, never the host.
 */
export function parseVirtualPath(input: unknown, options: { directory?: boolean } = {}): ParsedPath {
  if (typeof input !== 'string') {
    throw new ToolError(
      'invalid_argument',
      `The path must be a string, not ${describeType(input)}; send a workspace-relative path such as "src/index.ts".`,
      { path: input },
    );
  }
  const problem = characterProblem(input);
  if (problem !== undefined) {
    throw new ToolError('invalid_argument', `The path ${quote(input)} ${problem}.`, { path: input });
  }
  if (input.normalize('NFC') !== input) {
    throw new ToolError(
      'invalid_argument',
      `The path ${quote(input)} is not in Unicode NFC form; send it NFC-normalised, as ${quote(input.normalize('NFC'))}.`,
      { path: input },
    );
  }

  const body = input.startsWith('/') ? input.slice(1) : input;
  const parts = body === '' ? [] : body.split('/');
  const trailingSlash = parts.length > 1 && parts[parts.length - 1] === '';
  if (trailingSlash) parts.pop();

  const segments: string[] = [];
  for (const part of parts) {
    if (part === '') {
      throw new ToolError(
        'invalid_argument',
        `The path ${quote(input)} has an empty segment ("//"); remove the extra "/".`,
        { path: input },
      );
    }
    if (part === '..') {
      throw new ToolError(
        'path_outside_workspace',
        `The path ${quote(input)} has a ".." segment, which is never allowed; name the file from the workspace root instead.`,
        { path: input },
      );
    }
    if (part !== '.') segments.push(part);
  }
  // The root is a directory whichever way it is spelled, so `./` needs no directory context.
  if (trailingSlash && segments.length > 0 && options.directory !== true) {
    throw new ToolError('invalid_argument', `The path ${quote(input)} names a directory; remove the trailing /.`, {
      path: input,
    });
  }
  return { segments, path: joinPath(segments), trailingSlash };
}

/** Printable ASCII but `\\`, in `/`-separated segments none of which is empty, `.` or `..`: canonical as it is. */
const PLAIN_CANONICAL =
  /^(?!\.\.?(?:\/|$))[\x20-\x2e\x30-\x5b\x5d-\x7e]+(?:\/(?!\.\.?(?:\/|$))[\x20-\x2e\x30-\x5b\x5d-\x7e]+)*$/;

/**
 * Whether `text` is a canonical path other than the root: exactly what `parseVirtualPath` accepts
 * and spells the same way. Plain ASCII paths are told by one regular expression (a runner checks
 * every path of a manifest of thousands); anything else goes through `parseVirtualPath`.
 */
export function isCanonicalPath(text: string): boolean {
  if (text.length <= MAX_PATH_BYTES && PLAIN_CANONICAL.test(text)) return true;
  try {
    return text !== '' && parseVirtualPath(text).path === text;
  } catch {
    return false;
  }
}

export function joinPath(segments: readonly string[]): string {
  return segments.join('/');
}

/** The canonical parent of a canonical path: `a/b` -> `a`, `a` -> `''`, `''` -> `''`. */
export function parentPath(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? '' : path.slice(0, slash);
}

/** Whether canonical `path` lies strictly below canonical `directory` (everything but the root lies below the root). */
export function isBelow(path: string, directory: string): boolean {
  return directory === '' ? path !== '' : path.startsWith(`${directory}/`);
}

/** The last segment of a canonical path; `''` for the root. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * UTF-8 length of `text`, counting no further than `limit + 1` so a huge string costs little.
 * An unpaired surrogate counts 3 bytes, as the encoder's U+FFFD replacement would.
 */
export function utf8ByteLength(text: string, limit = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The first thing wrong with the characters of `text`, phrased to follow "The path X". */
function characterProblem(text: string): string | undefined {
  if (utf8ByteLength(text, MAX_PATH_BYTES) > MAX_PATH_BYTES) {
    return `is longer than ${MAX_PATH_BYTES} bytes in UTF-8; use a shorter path`;
  }
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0) return 'contains a NUL character; remove it';
    if (code < 0x20 || code === 0x7f || (code >= 0x80 && code <= 0x9f)) {
      return `contains the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}; remove it`;
    }
    if (code === 0x5c) return 'contains a backslash; separate segments with "/"';
    // An unpaired surrogate cannot be stored as UTF-8, so two such paths would alias one key.
    if (code >= 0xd800 && code <= 0xdbff) {
      if (!isLowSurrogate(text.charCodeAt(i + 1)))
        return 'contains an unpaired UTF-16 surrogate; send well-formed Unicode';
      i++;
    } else if (isLowSurrogate(code)) {
      return 'contains an unpaired UTF-16 surrogate; send well-formed Unicode';
    }
  }
  return undefined;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** JSON quoting shows control characters as escapes; long paths are cut so messages stay short. */
function quote(text: string): string {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return JSON.stringify(shown);
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

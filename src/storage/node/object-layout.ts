// Where the fs object store keeps each key on disk (see fs-object-store.ts for the layout), and
// its keys walked in order.

import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export const OBJECT_SUFFIX = '.obj';
export const DIRECTORY_SUFFIX = '.d';
const MAX_NAME_BYTES = 255;
const MAX_REMEMBERED_DIRECTORIES = 10_000;

/** The files and directories of one store's keys under its root. */
export class ObjectLocations {
  readonly #rootDir: string;
  /**
   * The directory of each key prefix met (`ws/x/blobs/ab` to its path on disk): a batch of
   * thousands of blobs lies in a few hundred directories, and encoding and joining every segment
   * of every key again cost more than writing the batch's bytes.
   */
  readonly #directories = new Map<string, string>();

  constructor(rootDir: string) {
    this.#rootDir = rootDir;
  }

  objectPath(key: string): string {
    const { dir, name } = this.objectLocation(key);
    return `${dir}/${name}`;
  }

  /** The directory an object's file lies in, and the file's name there. */
  objectLocation(key: string): { dir: string; name: string } {
    // With its slash, so that `b` and `/b` (refused) never share an entry.
    const slash = key.lastIndexOf('/');
    const prefix = key.slice(0, slash + 1);
    const last = key.slice(slash + 1);
    let directory = this.#directories.get(prefix);
    if (directory === undefined) {
      const segments = validateKey(key);
      segments.pop();
      directory = this.directoryPath(segments);
      if (this.#directories.size >= MAX_REMEMBERED_DIRECTORIES) this.#directories.clear();
      this.#directories.set(prefix, directory);
    } else validateKey(last);
    // A valid segment's name holds no `/` and never starts with `.`: nothing for join to resolve.
    return { dir: directory, name: nameFor(last, OBJECT_SUFFIX) };
  }

  directoryPath(segments: string[]): string {
    return join(this.#rootDir, ...segments.map((segment) => nameFor(segment, DIRECTORY_SUFFIX)));
  }
}

/** Refuses keys that could name anything outside the root or alias another key. */
export function validateKey(key: string): string[] {
  if (key.length === 0) throw new Error('Object key must not be empty.');
  if (key.includes('\0') || key.includes('\\')) {
    throw new Error(`Object key ${JSON.stringify(key)} must not contain NUL or backslash.`);
  }
  const segments = key.split('/');
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new Error(`Object key ${JSON.stringify(key)} must not be absolute or contain empty, "." or ".." segments.`);
    }
  }
  return segments;
}

/** Segments that need no escape and are as many bytes as characters: blob hashes, most key segments. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export function nameFor(segment: string, suffix: string): string {
  if (PLAIN_SEGMENT.test(segment) && segment.length + suffix.length <= MAX_NAME_BYTES) return segment + suffix;
  const name = encodeSegment(segment) + suffix;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    throw new Error(`Object key segment ${JSON.stringify(segment.slice(0, 40))}… is too long for a file name.`);
  }
  return name;
}

function encodeSegment(segment: string): string {
  let encoded = '';
  for (let index = 0; index < segment.length; index += 1) {
    const char = segment[index] as string;
    const code = char.charCodeAt(0);
    const mustEscape = char === '%' || code < 0x20 || code === 0x7f || (index === 0 && char === '.');
    encoded += mustEscape ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : char;
  }
  return encoded;
}

function decodeSegment(name: string): string {
  return name.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Yields keys under `dir` (whose keys start with `keyPrefix`) that start with `prefix` and sort
 * after `after`, in ascending key order. A directory sorts as its name plus `/`, since every
 * key inside it starts with that, which keeps the depth-first walk in key order. Subtrees that
 * cannot match the prefix or lie wholly before the cursor are never read.
 */
export async function* walkKeys(
  dir: string,
  keyPrefix: string,
  prefix: string,
  after: string | undefined,
): AsyncGenerator<string> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (names === null) return;
  const entries: { sortKey: string; name: string; isDirectory: boolean }[] = [];
  for (const name of names) {
    // Names starting with `.` are temp files of writes in flight or cut short.
    if (name.startsWith('.')) continue;
    if (name.endsWith(OBJECT_SUFFIX)) {
      entries.push({
        sortKey: keyPrefix + decodeSegment(name.slice(0, -OBJECT_SUFFIX.length)),
        name,
        isDirectory: false,
      });
    } else if (name.endsWith(DIRECTORY_SUFFIX)) {
      entries.push({
        sortKey: `${keyPrefix}${decodeSegment(name.slice(0, -DIRECTORY_SUFFIX.length))}/`,
        name,
        isDirectory: true,
      });
    }
  }
  entries.sort((left, right) => (left.sortKey < right.sortKey ? -1 : left.sortKey > right.sortKey ? 1 : 0));
  for (const entry of entries) {
    if (entry.isDirectory) {
      const overlapsPrefix = entry.sortKey.startsWith(prefix) || prefix.startsWith(entry.sortKey);
      const beforeCursor = after !== undefined && entry.sortKey < after && !after.startsWith(entry.sortKey);
      if (overlapsPrefix && !beforeCursor) yield* walkKeys(join(dir, entry.name), entry.sortKey, prefix, after);
    } else if (entry.sortKey.startsWith(prefix) && (after === undefined || entry.sortKey > after)) {
      yield entry.sortKey;
    }
  }
}

/** Key order as walkKeys yields it: by UTF-16 code units. */
export function byCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The keys of a walk and of journalled objects (sorted) in one ascending order, each once. */
export async function* mergeKeys(walk: AsyncGenerator<string>, journalled: readonly string[]): AsyncGenerator<string> {
  let next = 0;
  for await (const key of walk) {
    while (next < journalled.length && journalled[next]! < key) yield journalled[next++]!;
    if (journalled[next] === key) next += 1;
    yield key;
  }
  while (next < journalled.length) yield journalled[next++]!;
}

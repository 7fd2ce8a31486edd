// Parses the Codex apply_patch envelope (`*** Begin Patch` … `*** End Patch`) into file operations.
import { ToolError } from '../../core/errors.ts';
import type { FileOperation, Hunk, ParsedPatch } from './patch.ts';
import { contentBounds, findHeredoc, invalidPatch, isBlank, quoteLine, splitPatchLines } from './patch-text.ts';
import { runSteps } from '../../core/work-budget.ts';

const BEGIN_PATCH = '*** Begin Patch';
const END_PATCH = '*** End Patch';
const ADD_FILE = '*** Add File:';
const DELETE_FILE = '*** Delete File:';
const UPDATE_FILE = '*** Update File:';
const MOVE_TO = '*** Move to:';
const END_OF_FILE = '*** End of File';
/** 0-based indexes of the `*** Begin Patch` and `*** End Patch` lines, after any heredoc wrapper. */
function envelope(lines: readonly string[]): { begin: number; end: number } {
  const bounds = contentBounds(lines);
  if (bounds === undefined) throw invalidPatch(1, `expected '${BEGIN_PATCH}'; the patch is empty`);
  let { first, last } = bounds;
  const heredoc = findHeredoc(lines);
  if (heredoc !== undefined) {
    if (heredoc.closer === undefined) {
      throw invalidPatch(
        last + 1,
        `expected 'EOF' to close the heredoc opened on line ${heredoc.opener + 1}; got ${quoteLine(lines[last]!)}`,
      );
    }
    first += 1;
    last -= 1;
    while (first <= last && isBlank(lines[first]!)) first += 1;
    while (last >= first && isBlank(lines[last]!)) last -= 1;
    if (first > last) throw invalidPatch(heredoc.opener + 2, `expected '${BEGIN_PATCH}' inside the heredoc`);
  }
  if (lines[first]!.trim() !== BEGIN_PATCH) {
    throw invalidPatch(
      first + 1,
      `expected '${BEGIN_PATCH}' as the first line of the patch; got ${quoteLine(lines[first]!)}`,
    );
  }
  if (last === first || lines[last]!.trim() !== END_PATCH) {
    const got = last === first ? 'nothing after it' : quoteLine(lines[last]!);
    throw invalidPatch(last + 1, `expected '${END_PATCH}' as the last line of the patch; got ${got}`);
  }
  return { begin: first, end: last };
}

/** The path after a file header, trimmed; an empty one is refused here, every other check is the path guard's. */
function headerPath(line: string, marker: string, lineNumber: number): string {
  const path = line.trim().slice(marker.length).trim();
  if (path === '') throw invalidPatch(lineNumber, `expected a path after '${marker}'`);
  return path;
}

function isFileHeader(line: string): boolean {
  const trimmed = line.trim();
  return [ADD_FILE, DELETE_FILE, UPDATE_FILE].some((marker) => trimmed.startsWith(marker));
}

function unexpectedTopLevel(line: string, lineNumber: number): ToolError {
  const trimmed = line.trim();
  if (trimmed === END_PATCH)
    return invalidPatch(
      lineNumber,
      `'${END_PATCH}' must be the last line of the patch; remove what follows it or split the patches`,
    );
  if (trimmed.startsWith(MOVE_TO))
    return invalidPatch(lineNumber, `'${MOVE_TO}' must directly follow its '${UPDATE_FILE}' line`);
  if (trimmed === END_OF_FILE)
    return invalidPatch(lineNumber, `'${END_OF_FILE}' must end a hunk of an '${UPDATE_FILE}' section`);
  if (trimmed.startsWith('***')) {
    return invalidPatch(
      lineNumber,
      `${quoteLine(trimmed)} is not a valid file header; expected '${ADD_FILE} <path>', '${DELETE_FILE} <path>' or '${UPDATE_FILE} <path>'`,
    );
  }
  return invalidPatch(
    lineNumber,
    `expected a '*** ' file header; got ${quoteLine(line)} (hunk lines belong under '${UPDATE_FILE}', '+' lines under '${ADD_FILE}', and an added file ends at its first line without '+')`,
  );
}

/** Codex's hunk header: `@@` alone or `@@ <context>`; the context is kept as written, only a blank one is dropped. */
function hunkHeader(line: string): { anchor: string | undefined } | undefined {
  if (line.trimEnd() === '@@') return { anchor: undefined };
  if (!line.startsWith('@@ ')) return undefined;
  const anchor = line.slice(3);
  return { anchor: anchor.trim() === '' ? undefined : anchor };
}

interface OpenHunk {
  hunk: Hunk;
  /** Body lines seen so far: a hunk ends up needing at least one. */
  size: number;
  /** Patch line of the last `@@` header, where a "no lines" error points after. */
  headerLine: number;
}

/** Lines parsed between two steps, where a caller may let the event loop run. */
export const LINES_PER_STEP = 2048;

/**
 * Parses the hunks of one `*** Update File:` section from `start`; returns them and the index
 * after them, stepping every LINES_PER_STEP lines.
 */
function* parseUpdateHunks(
  lines: readonly string[],
  start: number,
  end: number,
): Generator<void, { hunks: Hunk[]; next: number }, void> {
  const hunks: Hunk[] = [];
  let open: OpenHunk | undefined;
  const close = (lineNumber: number): void => {
    if (open === undefined) return;
    // A header with no line under it cannot be located or applied: Codex refuses it too.
    if (open.size === 0)
      throw invalidPatch(lineNumber, `expected hunk lines after the '@@' header on line ${open.headerLine}`);
    hunks.push(open.hunk);
    open = undefined;
  };
  let index = start;
  for (; index < end; index += 1) {
    if ((index - start) % LINES_PER_STEP === LINES_PER_STEP - 1) yield;
    const line = lines[index]!;
    const lineNumber = index + 1;
    const header = hunkHeader(line);
    if (header !== undefined) {
      if (open !== undefined && open.size === 0) {
        // Stacked headers narrow the search step by step (DESIGN.md); Codex's parser refuses them.
        if (header.anchor !== undefined) open.hunk.anchors.push(header.anchor);
        open.headerLine = lineNumber;
        continue;
      }
      close(lineNumber);
      const anchors = header.anchor === undefined ? [] : [header.anchor];
      open = {
        hunk: { anchors, oldLines: [], newLines: [], endOfFile: false, line: lineNumber },
        size: 0,
        headerLine: lineNumber,
      };
      continue;
    }
    // Exact but for trailing whitespace, as in Codex: an indented '*** End of File' is a context line.
    if (line.trimEnd() === END_OF_FILE) {
      if (open === undefined) throw unexpectedTopLevel(line, lineNumber);
      if (open.size === 0)
        throw invalidPatch(
          lineNumber,
          `expected hunk lines after the '@@' header on line ${open.headerLine}, before '${END_OF_FILE}'`,
        );
      open.hunk.endOfFile = true;
      close(lineNumber);
      continue;
    }
    // Only an unindented '*' ends the section: an indented '*** …' line is context, as in Codex.
    if (line.startsWith('*')) break;
    if (open === undefined && isBlank(line)) continue; // Codex skips blank lines between hunks.
    const kind = line === '' ? ' ' : line[0];
    if (kind !== ' ' && kind !== '+' && kind !== '-') {
      if (open === undefined && hunks.length > 0) {
        throw invalidPatch(
          lineNumber,
          `expected '@@' to start the next hunk, or a '*** ' file header; got ${quoteLine(line)}`,
        );
      }
      throw invalidPatch(
        lineNumber,
        `expected a hunk line starting with ' ', '+' or '-', or '@@', or a '*** ' file header; got ${quoteLine(line)}`,
      );
    }
    if (open === undefined) {
      // Codex lets only the first hunk of a file start without an '@@' header.
      if (hunks.length > 0)
        throw invalidPatch(lineNumber, `expected '@@' to start the next hunk; got ${quoteLine(line)}`);
      open = {
        hunk: { anchors: [], oldLines: [], newLines: [], endOfFile: false, line: lineNumber },
        size: 0,
        headerLine: lineNumber,
      };
    }
    // An empty line inside a hunk is an empty context line: editors and models drop the lone space.
    const body = line.slice(1);
    if (kind !== '+') open.hunk.oldLines.push(body);
    if (kind !== '-') open.hunk.newLines.push(body);
    open.size += 1;
  }
  close(index + 1);
  return { hunks, next: index };
}

/** Parses a Codex envelope; errors are patch_invalid with the 1-based patch line in `details.line`. */
export function parseCodexPatch(text: string): ParsedPatch {
  return runSteps(codexPatchSteps(splitPatchLines(text)));
}

/**
 * Parses a Codex envelope given as its lines (splitPatchLines), stepping every LINES_PER_STEP
 * lines so that a caller may let the event loop run (runStepsSliced).
 */
export function* codexPatchSteps(lines: readonly string[]): Generator<void, ParsedPatch, void> {
  const { begin, end } = envelope(lines);
  const operations: FileOperation[] = [];
  let index = begin + 1;
  while (index < end) {
    const line = lines[index]!;
    const lineNumber = index + 1;
    const trimmed = line.trim();
    if (trimmed === '') {
      // Codex refuses blank lines between operations; they carry no meaning, so they are skipped.
      index += 1;
    } else if (trimmed.startsWith(ADD_FILE)) {
      const path = headerPath(line, ADD_FILE, lineNumber);
      const contents: string[] = [];
      index += 1;
      while (index < end && lines[index]!.startsWith('+')) {
        contents.push(lines[index]!.slice(1), '\n');
        index += 1;
        if (contents.length % (2 * LINES_PER_STEP) === 0) yield;
      }
      operations.push({ kind: 'add', path, contents: contents.join(''), line: lineNumber });
    } else if (trimmed.startsWith(DELETE_FILE)) {
      operations.push({ kind: 'delete', path: headerPath(line, DELETE_FILE, lineNumber), line: lineNumber });
      index += 1;
    } else if (trimmed.startsWith(UPDATE_FILE)) {
      const path = headerPath(line, UPDATE_FILE, lineNumber);
      index += 1;
      let moveTo: string | undefined;
      if (index < end && lines[index]!.trim().startsWith(MOVE_TO)) {
        moveTo = headerPath(lines[index]!, MOVE_TO, index + 1);
        index += 1;
      }
      const { hunks, next } = yield* parseUpdateHunks(lines, index, end);
      if (hunks.length === 0) {
        // A misplaced line right after the header says more than "no hunks" does.
        if (next < end && !isFileHeader(lines[next]!)) throw unexpectedTopLevel(lines[next]!, next + 1);
        throw invalidPatch(
          lineNumber,
          `the update of '${path}' has no hunks; add '@@' hunks with ' ', '-' and '+' lines, or use '${DELETE_FILE}' or '${ADD_FILE}'`,
        );
      }
      index = next;
      operations.push(
        moveTo === undefined
          ? { kind: 'update', path, hunks, line: lineNumber }
          : { kind: 'update', path, moveTo, hunks, line: lineNumber },
      );
    } else {
      throw unexpectedTopLevel(line, lineNumber);
    }
  }
  if (operations.length === 0) {
    throw invalidPatch(
      end + 1,
      `the patch contains no file operations; put '${ADD_FILE}', '${UPDATE_FILE}' or '${DELETE_FILE}' sections between the markers`,
    );
  }
  return { format: 'codex', operations };
}

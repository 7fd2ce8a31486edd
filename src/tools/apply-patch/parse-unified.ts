// Parses git-style unified diffs (`diff --git`, `--- a/x` / `+++ b/x`, `@@` hunks) into file operations, via jsdiff.
import { parsePatch as parseStructuredPatches, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import type { ToolError } from '../../core/errors.ts';
import { isCrlf } from '../../core/text-lines.ts';
import { invalidPatch, quoteLine } from './patch-text.ts';
import type { FileOperation, Hunk, ParsedPatch } from './patch.ts';

const DEV_NULL = '/dev/null';
const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;
/** Lines that start the diff of one file, as jsdiff splits them. */
const DIFF_HEADER = /^(?:diff --git |Index:\s|diff(?: -r \w+)+\s)/;
/** Header lines between files that carry nothing toolgate needs (modes, hashes, similarity, `diff -u …`). */
const METADATA =
  /^(?:index |old mode |new mode |new file mode |deleted file mode |similarity index |dissimilarity index |rename from |rename to |diff |=+$)/;

/** Refuses what jsdiff would accept but toolgate cannot apply, and hunk headers jsdiff would misread. */
function refuseUnsupported(lines: readonly string[]): void {
  lines.forEach((line, index) => {
    if (line === 'GIT binary patch' || /^Binary files .* differ$/.test(line)) {
      throw invalidPatch(index + 1, 'binary patches are not supported; only text files can be patched');
    }
    if (/^copy (?:from|to) /.test(line)) {
      throw invalidPatch(index + 1, 'copies are not supported; add the new file with its full contents instead');
    }
    // jsdiff skips an `@@` line it cannot read, which would silently drop the hunk under it.
    if (line.startsWith('@@') && !HUNK_HEADER.test(line)) {
      throw invalidPatch(index + 1, `expected a hunk header like '@@ -12,5 +12,6 @@'; got ${quoteLine(line)}`);
    }
  });
}

/** The first line jsdiff could not read as part of the hunk whose header is at `header` (0-based). */
function firstUnreadableLine(lines: readonly string[], header: number): number {
  for (let index = header + 1; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line === '' ? index === lines.length - 1 : !'+- \\'.includes(line[0]!)) return index;
  }
  return lines.length - 1;
}

/** The first line after the hunk at `header` (0-based) once the counts in its header are used up. */
function lineAfterCountedHunk(lines: readonly string[], header: number): number {
  const counts = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(lines[header] ?? '');
  const oldCount = Number(counts?.[1] ?? 1);
  const newCount = Number(counts?.[2] ?? 1);
  let removed = 0;
  let added = 0;
  let index = header + 1;
  for (; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (removed >= oldCount && added >= newCount && !line.startsWith('\\')) break;
    if (line.startsWith('-')) removed += 1;
    else if (line.startsWith('+')) added += 1;
    else if (!line.startsWith('\\')) {
      removed += 1;
      added += 1;
    }
  }
  return index;
}

/** jsdiff throws plain Errors whose messages name a line; they become patch_invalid at the line at fault. */
function fromJsdiffError(error: unknown, lines: readonly string[]): ToolError {
  const message = error instanceof Error ? error.message : String(error);
  const invalidLine = /^Hunk at line (\d+) contained invalid line/.exec(message);
  if (invalidLine) {
    const header = Number(invalidLine[1]) - 1;
    const bad = firstUnreadableLine(lines, header);
    const line = lines[bad] ?? '';
    if (line === '' && bad === lines.length - 1) {
      return invalidPatch(
        bad + 1,
        `the patch ends inside the hunk of line ${header + 1}: its header counts more lines than follow it; fix the counts in the '@@' header`,
      );
    }
    return invalidPatch(
      bad + 1,
      `expected a hunk line starting with ' ', '+', '-' or '\\' (the header on line ${header + 1} counts more lines); got ${quoteLine(line)}`,
    );
  }
  const badCount = /^(Added|Removed) line count did not match for hunk at line (\d+)/.exec(message);
  if (badCount) {
    const header = Number(badCount[2]);
    const side = badCount[1] === 'Added' ? 'new' : 'old';
    return invalidPatch(
      header,
      `the ${side} line count in ${quoteLine(lines[header - 1] ?? '')} does not match the hunk's lines; fix the counts in the '@@' header`,
    );
  }
  const tooLong = /^Hunk at line (\d+) has more lines than expected/.exec(message);
  if (tooLong) {
    const header = Number(tooLong[1]);
    const extra = lineAfterCountedHunk(lines, header - 1);
    return invalidPatch(
      extra + 1,
      `the hunk of line ${header} has more lines than its '@@' header counts; got ${quoteLine(lines[extra] ?? '')} after its last counted line; fix the counts in the header`,
    );
  }
  const missingHeader = /^Missing "(---|\+\+\+) \.\.\." file header for (.*)$/.exec(message);
  if (missingHeader) {
    const present = lines.findIndex((line) => /^(?:---|\+\+\+)\s/.test(line) && line.includes(missingHeader[2]!));
    return invalidPatch(
      present + 1 || 1,
      `expected a '${missingHeader[1]} <path>' line to pair with ${quoteLine(lines[present] ?? '')}`,
    );
  }
  const anyLine = /line (\d+)/.exec(message);
  return invalidPatch(anyLine ? Number(anyLine[1]) : 1, `the unified diff does not parse: ${message}`);
}

interface Layout {
  /** 0-based line of each file's first header, in jsdiff's order of non-empty files. */
  fileStarts: number[];
  /** 0-based line of each hunk's `@@` header, in jsdiff's order of hunks across all files. */
  hunkHeaders: number[];
}

/**
 * Walks the lines the way jsdiff splits them, to recover the patch lines it does not report, and
 * refuses any stray line outside hunks: jsdiff skips those, which would silently drop changes.
 */
function scanLayout(lines: readonly string[], patches: readonly StructuredPatch[]): Layout {
  const hunks = patches.flatMap((patch) => patch.hunks);
  const layout: Layout = { fileStarts: [], hunkHeaders: [] };
  let file: { sawFileHeader: boolean; hunks: number } | undefined;
  const startFile = (index: number): void => {
    layout.fileStarts.push(index);
    file = { sawFileHeader: false, hunks: 0 };
  };
  for (let index = 0; index < lines.length;) {
    const line = lines[index]!;
    if (line.startsWith('@@')) {
      const hunk = hunks[layout.hunkHeaders.length];
      if (file === undefined || hunk === undefined) {
        throw invalidPatch(index + 1, "expected '--- a/<path>' and '+++ b/<path>' lines before the first hunk");
      }
      layout.hunkHeaders.push(index);
      file.hunks += 1;
      index += 1 + hunk.lines.length;
      continue;
    }
    if (DIFF_HEADER.test(line)) {
      startFile(index);
    } else if (/^---\s/.test(line)) {
      // A `---` after hunks, or a second one, starts the next file, as in jsdiff.
      if (file === undefined || file.sawFileHeader || file.hunks > 0) startFile(index);
      file!.sawFileHeader = true;
    } else if (!(line.trim() === '' || /^\+\+\+\s/.test(line) || METADATA.test(line))) {
      throw invalidPatch(
        index + 1,
        `expected a '@@ -a,b +c,d @@' hunk header, a '--- ' / '+++ ' file header or git metadata; got ${quoteLine(line)}`,
      );
    }
    index += 1;
  }
  return layout;
}

interface ConvertedHunk {
  hunk: Hunk;
  /** `\ No newline at end of file` after a line of the old side, of the new side. */
  oldEndsWithoutNewline: boolean;
  newEndsWithoutNewline: boolean;
}

function convertHunk(source: StructuredPatchHunk, headerIndex: number): ConvertedHunk {
  const hunk: Hunk = {
    anchors: [],
    oldLines: [],
    newLines: [],
    endOfFile: false,
    line: headerIndex + 1,
    oldStart: source.oldStart,
  };
  const result: ConvertedHunk = { hunk, oldEndsWithoutNewline: false, newEndsWithoutNewline: false };
  let side: '-' | '+' | ' ' | undefined;
  for (const raw of source.lines) {
    // jsdiff keeps an empty line inside a hunk as an empty context line.
    const kind = raw === '' ? ' ' : raw[0];
    if (kind === '\\') {
      // The marker speaks of the line just before it: a context line ends both sides.
      if (side === '-' || side === ' ') result.oldEndsWithoutNewline = true;
      if (side === '+' || side === ' ') result.newEndsWithoutNewline = true;
      continue;
    }
    side = kind as '-' | '+' | ' ';
    const body = raw.slice(1);
    if (kind !== '+') hunk.oldLines.push(body);
    if (kind !== '-') hunk.newLines.push(body);
  }
  return result;
}

/** Strips git's `a/` and `b/` prefixes as `git apply -p1` does, only when the patch uses them. */
function stripPrefixes(oldName: string, newName: string): { oldPath: string; newPath: string } {
  const oldReal = oldName !== DEV_NULL;
  const newReal = newName !== DEV_NULL;
  const prefixed = (oldReal ? oldName.startsWith('a/') : true) && (newReal ? newName.startsWith('b/') : true);
  if (!prefixed) return { oldPath: oldName, newPath: newName };
  return { oldPath: oldReal ? oldName.slice(2) : oldName, newPath: newReal ? newName.slice(2) : newName };
}

function fileOperation(
  patch: StructuredPatch,
  line: number,
  hunks: readonly ConvertedHunk[],
): FileOperation | undefined {
  if (patch.oldFileName === undefined || patch.newFileName === undefined) {
    throw invalidPatch(line, "expected '--- a/<path>' and '+++ b/<path>' lines naming the file");
  }
  const isAdd = patch.oldFileName === DEV_NULL || patch.isCreate === true;
  const isDelete = patch.newFileName === DEV_NULL || patch.isDelete === true;
  if (isAdd && isDelete) throw invalidPatch(line, 'a file diff cannot both create and delete its file');
  const { oldPath, newPath } = stripPrefixes(patch.oldFileName, patch.newFileName);
  const path = isAdd ? newPath : oldPath;
  if (path === '' || (!isAdd && !isDelete && newPath === ''))
    throw invalidPatch(line, 'expected a path in the file headers');
  const newEndsWithoutNewline = hunks.some((converted) => converted.newEndsWithoutNewline);
  if (isAdd) {
    const added = hunks.flatMap((converted) => converted.hunk.newLines);
    const contents = added.length === 0 ? '' : added.join('\n') + (newEndsWithoutNewline ? '' : '\n');
    return { kind: 'add', path, contents, line };
  }
  if (isDelete) return { kind: 'delete', path, line };
  if (oldPath !== newPath && patch.isRename !== true) {
    throw invalidPatch(
      line,
      `the '---' and '+++' paths differ (${quoteLine(oldPath)} and ${quoteLine(newPath)}) without 'rename from' / 'rename to' lines; name the same file on both`,
    );
  }
  const moveTo = oldPath !== newPath ? newPath : undefined;
  if (hunks.length === 0 && moveTo === undefined) {
    // A mode-only change: toolgate keeps no file modes, so there is nothing to do for this file.
    if (patch.oldMode !== undefined || patch.newMode !== undefined) return undefined;
    throw invalidPatch(line, `the diff of ${quoteLine(oldPath)} has no hunks; add '@@ -a,b +c,d @@' hunks`);
  }
  const last = hunks[hunks.length - 1];
  if (last !== undefined) {
    if (newEndsWithoutNewline) last.hunk.finalNewline = false;
    else if (hunks.some((converted) => converted.oldEndsWithoutNewline)) last.hunk.finalNewline = true;
  }
  const converted = hunks.map((entry) => entry.hunk);
  return moveTo === undefined
    ? { kind: 'update', path, hunks: converted, line }
    : { kind: 'update', path, moveTo, hunks: converted, line };
}

/** Parses a unified diff; errors are patch_invalid with the 1-based patch line in `details.line`. */
export function parseUnifiedDiff(text: string): ParsedPatch {
  // A patch sent with CRLF throughout has CRLF as its transport, not as part of the lines.
  const source = isCrlf(text) ? text.replace(/\r\n/g, '\n') : text;
  const lines = source.split('\n');
  refuseUnsupported(lines);
  let patches: StructuredPatch[];
  try {
    patches = parseStructuredPatches(source);
  } catch (error) {
    throw fromJsdiffError(error, lines);
  }
  const layout = scanLayout(lines, patches);
  const files = patches.filter(
    (patch) => patch.oldFileName !== undefined || patch.newFileName !== undefined || patch.hunks.length > 0,
  );
  const operations: FileOperation[] = [];
  let hunkIndex = 0;
  files.forEach((patch, fileIndex) => {
    const hunks = patch.hunks.map((hunk) => convertHunk(hunk, layout.hunkHeaders[hunkIndex++] ?? 0));
    const line = (layout.fileStarts[fileIndex] ?? layout.hunkHeaders[hunkIndex - hunks.length] ?? 0) + 1;
    const operation = fileOperation(patch, line, hunks);
    if (operation !== undefined) operations.push(operation);
  });
  if (operations.length === 0) throw invalidPatch(1, 'the patch contains no file operations');
  return { format: 'unified', operations };
}

// The reference for the property test in locator-equivalence.test.ts: apply-hunks.ts as it was before the work
// budget (commit 6e0c84b), verbatim but for its imports.
// Applies the hunks of one file update to its text: locates every hunk as Codex does, then splices them in.
import { ToolError } from '../../../../src/core/errors.ts';
import { isCrlf } from '../../../../src/core/text-lines.ts';
import type { ChangedRange } from '../../../../src/core/text-diff.ts';
import { quoteLine } from '../../../../src/tools/apply-patch/patch-text.ts';
import type { Hunk } from '../../../../src/tools/apply-patch/patch.ts';
import { LineFolds, seekSequence, sequenceMatchesAt } from './seek-before.ts';

interface FileText {
  lines: string[];
  eol: '\n' | '\r\n';
  finalNewline: boolean;
}

/**
 * Lines without their endings. A mixed file is split at `\n` only, so its `\r`s stay part of the
 * lines, as docs/api.md counts lines. An empty file counts as ending with a newline, so that lines
 * added to it end with one.
 */
function splitFile(original: string): FileText {
  const eol = isCrlf(original) ? '\r\n' : '\n';
  const lines = original.split(eol);
  const finalNewline = lines[lines.length - 1] === '';
  if (finalNewline) lines.pop();
  return { lines, eol, finalNewline };
}

/** One located hunk: `length` lines from `start` become `newLines`. */
interface Replacement {
  start: number;
  length: number;
  newLines: readonly string[];
  /** 1-based index of the hunk within the file. */
  hunk: number;
}

function preview(lines: readonly string[]): string {
  const shown = lines.slice(0, 3).map(quoteLine);
  const more = lines.length > 3 ? ` … (${lines.length - 3} more)` : '';
  return `${shown.join(' / ')}${more}`;
}

function where(cursor: number): string {
  return cursor === 0 ? 'from the start of the file' : `after line ${cursor}`;
}

function conflict(
  path: string,
  number: number,
  hunk: Hunk,
  expected: readonly string[],
  problem: string,
  advice = 'read the file again and regenerate the hunk',
): ToolError {
  return new ToolError(
    'patch_conflict',
    `hunk ${number} of ${path} (patch line ${hunk.line}) does not match the file: ${problem}; ${advice}`,
    {
      path,
      hunk: number,
      line: hunk.line,
      expected: [...expected],
    },
  );
}

/** Locates every hunk in order, with a cursor that only moves forward, as Codex's compute_replacements does. */
function locate(
  path: string,
  lines: readonly string[],
  hunks: readonly Hunk[],
  clean: (line: string) => string,
): Replacement[] {
  const folds = new LineFolds(lines);
  const located: Replacement[] = [];
  let cursor = 0;
  hunks.forEach((hunk, index) => {
    const number = index + 1;
    let anchor: { text: string; at: number } | undefined;
    for (const raw of hunk.anchors) {
      const text = clean(raw);
      const at = seekSequence(lines, [text], cursor, false, folds);
      if (at === undefined) {
        // A unified-diff range in a Codex header is a frequent model mistake: say so rather than only "not found".
        const advice = /^-\d+(?:,\d+)? \+\d+(?:,\d+)? @@/.test(text)
          ? "write '@@' alone or '@@ <a line of the file>', not a unified-diff range, in a '*** Update File:' hunk"
          : undefined;
        throw conflict(
          path,
          number,
          hunk,
          [text],
          `the context line '@@ ${text}' was not found ${where(cursor)}`,
          advice,
        );
      }
      anchor = { text, at };
      cursor = at + 1;
    }
    const oldLines = hunk.oldLines.map(clean);
    let newLines = hunk.newLines.map(clean);
    if (oldLines.length === 0) {
      // A pure addition does not move the cursor: the next hunk may still match right after its anchor.
      located.push({ start: insertionPoint(lines, hunk, anchor, cursor), length: 0, newLines, hunk: number });
      return;
    }
    const seek = (pattern: readonly string[]): number | undefined => {
      // A unified hunk says where it was cut from: believe it first, then search as for any hunk.
      const hint = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1;
      if (hint !== undefined && hint >= cursor && sequenceMatchesAt(lines, pattern, hint, folds)) return hint;
      const at = seekSequence(lines, pattern, cursor, hunk.endOfFile, folds);
      // Models often repeat the `@@` line as the hunk's first context line; Codex then fails, having
      // moved past it. Only when nothing else matched is the search retried from the anchor itself.
      if (at === undefined && anchor !== undefined && pattern[0]?.trim() === anchor.text.trim()) {
        return seekSequence(lines, pattern, anchor.at, hunk.endOfFile, folds);
      }
      return at;
    };
    let pattern = oldLines;
    let at = seek(pattern);
    if (at === undefined && pattern[pattern.length - 1] === '') {
      // Codex's retry: a trailing empty line often stands for the file's final newline, not a line.
      pattern = pattern.slice(0, -1);
      if (newLines[newLines.length - 1] === '') newLines = newLines.slice(0, -1);
      at = seek(pattern);
    }
    if (at === undefined) {
      const place = hunk.endOfFile ? 'at the end of the file' : `in order ${where(cursor)}`;
      throw conflict(path, number, hunk, oldLines, `these lines were not found ${place}: ${preview(oldLines)}`);
    }
    located.push({ start: at, length: pattern.length, newLines, hunk: number });
    cursor = at + pattern.length;
  });
  return located;
}

/**
 * Where a hunk without old lines goes: where its unified header says, right after its `@@` anchor,
 * or else at Codex's end of file (before a final empty line, if the file has one).
 */
function insertionPoint(
  lines: readonly string[],
  hunk: Hunk,
  anchor: { at: number } | undefined,
  cursor: number,
): number {
  if (hunk.oldStart !== undefined) return Math.min(Math.max(hunk.oldStart - 1, 0), lines.length);
  if (anchor !== undefined && !hunk.endOfFile) return cursor;
  return lines.length > 0 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
}

/** Sorts the located hunks by position and refuses two that claim the same lines. */
function ordered(path: string, located: Replacement[], hunks: readonly Hunk[]): Replacement[] {
  const sorted = [...located].sort((a, b) => a.start - b.start || a.hunk - b.hunk);
  for (let index = 1; index < sorted.length; index += 1) {
    const previous = sorted[index - 1]!;
    const current = sorted[index]!;
    if (previous.start + previous.length > current.start) {
      const later = Math.max(previous.hunk, current.hunk);
      const other = later === current.hunk ? previous : current;
      const hunk = hunks[later - 1]!;
      const span =
        other.length === 0
          ? `inserts at line ${other.start + 1}`
          : `changes lines ${other.start + 1}-${other.start + other.length}`;
      throw conflict(
        path,
        later,
        hunk,
        hunk.oldLines,
        `it overlaps hunk ${other.hunk}, which ${span}`,
        'merge the two hunks into one',
      );
    }
  }
  return sorted;
}

/**
 * The new text of one file after its hunks. Lines are compared without their line endings; a CRLF
 * file stays CRLF, and the final-newline state stays as it was unless a hunk says otherwise.
 * Throws patch_conflict (details: path, hunk, line, expected) when a hunk cannot be placed.
 */
export function applyHunks(path: string, original: string, hunks: readonly Hunk[]): string {
  return applyHunksWithRanges(path, original, hunks).text;
}

/** As applyHunks, also reporting which lines changed into which (for a diff that need not search). */
export function applyHunksWithRanges(
  path: string,
  original: string,
  hunks: readonly Hunk[],
): { text: string; ranges: ChangedRange[] } {
  if (hunks.length === 0) return { text: original, ranges: [] };
  const file = splitFile(original);
  // Patch lines may still carry the `\r` of a CRLF file (a git diff of one does): it is the file's ending, not text.
  const clean =
    file.eol === '\r\n' ? (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line) : (line: string) => line;
  const replacements = ordered(path, locate(path, file.lines, hunks, clean), hunks);
  const result: string[] = [];
  const ranges: ChangedRange[] = [];
  let position = 0;
  for (const replacement of replacements) {
    for (; position < replacement.start; position += 1) result.push(file.lines[position]!);
    ranges.push({
      oldStart: replacement.start,
      oldLength: replacement.length,
      newStart: result.length,
      newLength: replacement.newLines.length,
    });
    for (const line of replacement.newLines) result.push(line);
    position = replacement.start + replacement.length;
  }
  for (; position < file.lines.length; position += 1) result.push(file.lines[position]!);
  let finalNewline = file.finalNewline;
  for (const hunk of hunks) {
    if (hunk.finalNewline !== undefined) finalNewline = hunk.finalNewline;
  }
  const text = result.length === 0 ? '' : result.join(file.eol) + (finalNewline ? file.eol : '');
  return { text, ranges };
}

// Applies the hunks of one file update to its text: locates every hunk as Codex does, then splices them in.
import { ToolError } from '../../core/errors.ts';
import { isCrlf } from '../../core/text-lines.ts';
import type { ChangedRange } from '../../core/text-diff.ts';
import { quoteLine } from './patch-text.ts';
import type { Hunk } from './patch.ts';
import { LineIndex } from './line-index.ts';
import { seekSequence, sequenceMatchesAt } from './seek.ts';
import { WorkBudget, WorkLimitReached } from '../../core/work-budget.ts';

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
async function locate(
  path: string,
  lines: readonly string[],
  hunks: readonly Hunk[],
  clean: (line: string) => string,
  work: WorkBudget,
): Promise<Replacement[]> {
  // Every line any hunk may look for, so that each pass reads the file once for all hunks.
  const wanted = new Set<string>();
  for (const hunk of hunks) {
    for (const line of hunk.anchors) wanted.add(clean(line));
    for (const line of hunk.oldLines) wanted.add(clean(line));
    if (work.spend(hunk.anchors.length + hunk.oldLines.length)) await work.pause();
  }
  const index = new LineIndex(lines, work, wanted);
  const located: Replacement[] = [];
  let cursor = 0;
  for (const [position, hunk] of hunks.entries()) {
    const number = position + 1;
    try {
      cursor = await locateHunk(path, lines, hunk, number, cursor, clean, index, located);
    } catch (error) {
      if (error instanceof WorkLimitReached) throw workLimit(path, number, hunk, error.limit);
      throw error;
    }
  }
  return located;
}

/** Locates one hunk from `cursor`, adds it to `located` and answers the cursor for the next. */
async function locateHunk(
  path: string,
  lines: readonly string[],
  hunk: Hunk,
  number: number,
  start: number,
  clean: (line: string) => string,
  index: LineIndex,
  located: Replacement[],
): Promise<number> {
  let cursor = start;
  let anchor: { text: string; at: number } | undefined;
  for (const raw of hunk.anchors) {
    const text = clean(raw);
    const at = await seekSequence(lines, [text], cursor, false, index);
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
    return cursor;
  }
  const seek = async (pattern: readonly string[]): Promise<number | undefined> => {
    // A unified hunk says where it was cut from: believe it first, then search as for any hunk.
    const hint = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1;
    if (hint !== undefined && hint >= cursor && (await sequenceMatchesAt(lines, pattern, hint, index))) return hint;
    const at = await seekSequence(lines, pattern, cursor, hunk.endOfFile, index);
    // Models often repeat the `@@` line as the hunk's first context line; Codex then fails, having
    // moved past it. Only when nothing else matched is the search retried from the anchor itself.
    if (at === undefined && anchor !== undefined && pattern[0]?.trim() === anchor.text.trim()) {
      return seekSequence(lines, pattern, anchor.at, hunk.endOfFile, index);
    }
    return at;
  };
  let pattern = oldLines;
  let at = await seek(pattern);
  if (at === undefined && pattern[pattern.length - 1] === '') {
    // Codex's retry: a trailing empty line often stands for the file's final newline, not a line.
    pattern = pattern.slice(0, -1);
    if (newLines[newLines.length - 1] === '') newLines = newLines.slice(0, -1);
    at = await seek(pattern);
  }
  if (at === undefined) {
    const place = hunk.endOfFile ? 'at the end of the file' : `in order ${where(cursor)}`;
    throw conflict(path, number, hunk, oldLines, `these lines were not found ${place}: ${preview(oldLines)}`);
  }
  located.push({ start: at, length: pattern.length, newLines, hunk: number });
  return at + pattern.length;
}

/** The answer when locating a hunk would take more work than a call may spend (docs/api.md). */
function workLimit(path: string, number: number, hunk: Hunk, limit: number): ToolError {
  return new ToolError(
    'patch_conflict',
    `hunk ${number} of ${path} (patch line ${hunk.line}) could not be located within the work limit of ` +
      `${limit.toLocaleString('en-US')} ` +
      'line comparisons: its lines could start at very many places in the file and none matched whole, or the ' +
      'file is too long to search again ignoring whitespace and punctuation; nothing was changed. Copy the context ' +
      'lines exactly from the file, keep each hunk to the lines that change with a few distinctive context lines ' +
      'around them, or replace the whole file with write_file',
    {
      path,
      hunk: number,
      line: hunk.line,
      expected: [...hunk.oldLines],
      reason: 'work_limit',
    },
  );
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
 * Throws patch_conflict (details: path, hunk, line, expected) when a hunk cannot be placed, with
 * `reason: "work_limit"` when placing it would take more than `work` allows.
 */
export async function applyHunks(
  path: string,
  original: string,
  hunks: readonly Hunk[],
  work: WorkBudget = new WorkBudget(),
): Promise<string> {
  return (await applyHunksWithRanges(path, original, hunks, work)).text;
}

/**
 * As applyHunks, also reporting which lines changed into which (for a diff that need not search).
 * Locating spends `work` (one budget for a whole patch) and lets the event loop run as it goes; past
 * the budget it throws patch_conflict with `details.reason: "work_limit"`.
 */
export async function applyHunksWithRanges(
  path: string,
  original: string,
  hunks: readonly Hunk[],
  work: WorkBudget = new WorkBudget(),
): Promise<{ text: string; ranges: ChangedRange[] }> {
  if (hunks.length === 0) return { text: original, ranges: [] };
  const file = splitFile(original);
  // Patch lines may still carry the `\r` of a CRLF file (a git diff of one does): it is the file's ending, not text.
  const clean =
    file.eol === '\r\n' ? (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line) : (line: string) => line;
  const replacements = ordered(path, await locate(path, file.lines, hunks, clean, work), hunks);
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

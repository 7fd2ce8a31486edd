// The unified diff of one file, computed only around the lines a patch changed.
import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';

/** Lines `oldStart..oldStart+oldLength` (0-based) of the old text became `newStart..newStart+newLength` of the new. */
export interface ChangedRange {
  oldStart: number;
  oldLength: number;
  newStart: number;
  newLength: number;
}

const CONTEXT = 3;
/** Changed regions up to this many line pairs get a minimal (LCS) diff; larger ones a block replace. */
const MAX_LCS_CELLS = 250_000;

type Line = { kind: ' ' | '-' | '+'; text: string };

interface DiffHunk {
  oldFirst: number;
  newFirst: number;
  lines: Line[];
}

/**
 * A unified diff without timestamps. With the changed ranges known, only they are diffed, so 200
 * hunks in a 5,000-line file cost 200 small diffs rather than one Myers diff of the whole file;
 * without them, or when the end of a file without a final newline changed, jsdiff diffs the whole text.
 */
export function fileDiff(
  oldName: string,
  newName: string,
  before: string,
  after: string,
  ranges?: readonly ChangedRange[],
): string {
  const oldLines = linesWithEndings(before);
  const newLines = linesWithEndings(after);
  // A change at the end of a file without a final newline moves that newline between lines: rare, so jsdiff handles it.
  const lastLineMoves =
    before.endsWith('\n') !== after.endsWith('\n') ||
    ((!before.endsWith('\n') || !after.endsWith('\n')) &&
      ranges?.some((range) => range.oldStart + range.oldLength >= oldLines.length));
  if (ranges === undefined || lastLineMoves) {
    return createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, {
      context: CONTEXT,
      headerOptions: FILE_HEADERS_ONLY,
    });
  }
  const hunks: DiffHunk[] = [];
  let current: DiffHunk | undefined;
  let oldEnd = 0;
  for (const range of ranges) {
    // The lines between ranges are equal on both sides: up to 2 × CONTEXT of them join two hunks.
    if (current && range.oldStart - oldEnd <= 2 * CONTEXT) {
      for (let i = oldEnd; i < range.oldStart; i += 1) current.lines.push({ kind: ' ', text: oldLines[i]! });
    } else {
      if (current) closeHunk(current, oldLines, oldEnd, hunks);
      const lead = Math.min(CONTEXT, range.oldStart);
      current = { oldFirst: range.oldStart - lead, newFirst: range.newStart - lead, lines: [] };
      for (let i = range.oldStart - lead; i < range.oldStart; i += 1)
        current.lines.push({ kind: ' ', text: oldLines[i]! });
    }
    current.lines.push(
      ...diffLines(
        oldLines.slice(range.oldStart, range.oldStart + range.oldLength),
        newLines.slice(range.newStart, range.newStart + range.newLength),
      ),
    );
    oldEnd = range.oldStart + range.oldLength;
  }
  if (current) closeHunk(current, oldLines, oldEnd, hunks);
  return `--- ${oldName}\n+++ ${newName}\n${hunks
    .filter((hunk) => hunk.lines.some((line) => line.kind !== ' '))
    .map(formatHunk)
    .join('')}`;
}

function closeHunk(hunk: DiffHunk, oldLines: readonly string[], oldEnd: number, hunks: DiffHunk[]): void {
  for (let i = oldEnd; i < Math.min(oldLines.length, oldEnd + CONTEXT); i += 1)
    hunk.lines.push({ kind: ' ', text: oldLines[i]! });
  hunks.push(hunk);
}

function formatHunk(hunk: DiffHunk): string {
  const oldCount = hunk.lines.filter((line) => line.kind !== '+').length;
  const newCount = hunk.lines.filter((line) => line.kind !== '-').length;
  // As in GNU diff, an empty side names the line before it.
  const oldStart = oldCount === 0 ? hunk.oldFirst : hunk.oldFirst + 1;
  const newStart = newCount === 0 ? hunk.newFirst : hunk.newFirst + 1;
  let text = `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n`;
  for (const line of hunk.lines) {
    text += line.text.endsWith('\n')
      ? `${line.kind}${line.text}`
      : `${line.kind}${line.text}\n\\ No newline at end of file\n`;
  }
  return text;
}

/** A minimal line diff of a changed region (longest common subsequence), or a block replace when huge. */
function diffLines(before: readonly string[], after: readonly string[]): Line[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head += 1;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail += 1;
  const same = (from: readonly string[], start: number, end: number): Line[] =>
    from.slice(start, end).map((text) => ({ kind: ' ', text }));
  const middleOld = before.slice(head, before.length - tail);
  const middleNew = after.slice(head, after.length - tail);
  const middle =
    middleOld.length * middleNew.length <= MAX_LCS_CELLS
      ? lcsDiff(middleOld, middleNew)
      : [
          ...middleOld.map((text): Line => ({ kind: '-', text })),
          ...middleNew.map((text): Line => ({ kind: '+', text })),
        ];
  return [...same(before, 0, head), ...middle, ...same(before, before.length - tail, before.length)];
}

function lcsDiff(before: readonly string[], after: readonly string[]): Line[] {
  const columns = after.length + 1;
  // suffix[i][j]: length of the LCS of before[i..] and after[j..], in one flat array.
  const suffix = new Uint32Array((before.length + 1) * columns);
  for (let i = before.length - 1; i >= 0; i -= 1) {
    for (let j = after.length - 1; j >= 0; j -= 1) {
      suffix[i * columns + j] =
        before[i] === after[j]
          ? suffix[(i + 1) * columns + j + 1]! + 1
          : Math.max(suffix[(i + 1) * columns + j]!, suffix[i * columns + j + 1]!);
    }
  }
  const lines: Line[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      lines.push({ kind: ' ', text: before[i]! });
      i += 1;
      j += 1;
    } else if (
      j >= after.length ||
      (i < before.length && suffix[(i + 1) * columns + j]! >= suffix[i * columns + j + 1]!)
    ) {
      lines.push({ kind: '-', text: before[i]! });
      i += 1;
    } else {
      lines.push({ kind: '+', text: after[j]! });
      j += 1;
    }
  }
  return lines;
}

function linesWithEndings(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

// The unified diff of one file, computed only around the lines a patch changed.
import { DiffBudget, Lines, type Block, type ChangedRange, type Kind } from './diff-lines.ts';
import { diffRange } from './line-diff.ts';
import { unlimitedWork, type WorkBudget } from './work-budget.ts';

export { DiffBudget, MAX_DIFF_CELLS, type ChangedRange } from './diff-lines.ts';

const CONTEXT = 3;
/** Lines shown between two looks at the clock in a long run of changed lines. */
const SHOW_PIECE = 1024;

interface DiffHunk {
  oldFirst: number;
  newFirst: number;
  oldCount: number;
  newCount: number;
  text: string;
}

/** The work of showing one line of a diff (cutting it out, appending it), in the units of WorkBudget. */
const SHOW_LINE_COST = 50;
/** The work of diffing one range before its lines (its objects), in the same units. */
const RANGE_COST = 500;
/** Ranges longer than this (old and new lines) are trimmed with pauses before they are diffed. */
const LONG_RANGE = 4096;

/**
 * A unified diff without timestamps. With the changed ranges known, only they are diffed, so 200
 * hunks in a 5,000-line file cost 200 small diffs rather than one diff of the whole file; without
 * them (an added file, a deleted one, one replaced whole) the whole text is one range. Regions
 * are diffed minimally (LCS) while they are small and `budget` lasts, else shown as a block
 * replace: the cost is linear in the text, whatever the change. It lets the event loop run as
 * `clock` says (its limit is not enforced here: a diff's size is bounded by the texts').
 */
export async function fileDiff(
  oldName: string,
  newName: string,
  before: string,
  after: string,
  ranges?: readonly ChangedRange[],
  budget: DiffBudget = new DiffBudget(),
  clock: WorkBudget = unlimitedWork(),
): Promise<string> {
  const oldLines = new Lines(before);
  const newLines = new Lines(after);
  const changed: readonly ChangedRange[] =
    ranges === undefined
      ? [{ oldStart: 0, oldLength: oldLines.length, newStart: 0, newLength: newLines.length }]
      : withLastLines(ranges, oldLines, newLines);
  const blocks: Block[] = [];
  for (const range of changed) {
    // A long range (a whole file) loses its equal head and tail with pauses first; the rest is quick.
    const trimmed =
      range.oldLength + range.newLength > LONG_RANGE ? await trim(oldLines, newLines, range, clock) : range;
    const cellsBefore = budget.cells;
    joinBlocks(blocks, diffRange(oldLines, newLines, trimmed, budget));
    if (clock.spend(RANGE_COST + (cellsBefore - budget.cells))) await clock.pause();
  }
  const hunks = await hunksOf(blocks, oldLines, newLines, clock);
  return `--- ${oldName}\n+++ ${newName}\n${hunks
    .map((hunk) => {
      // As in GNU diff, an empty side names the line before it.
      const oldStart = hunk.oldCount === 0 ? hunk.oldFirst : hunk.oldFirst + 1;
      const newStart = hunk.newCount === 0 ? hunk.newFirst : hunk.newFirst + 1;
      return `@@ -${oldStart},${hunk.oldCount} +${newStart},${hunk.newCount} @@\n${hunk.text}`;
    })
    .join('')}`;
}

/**
 * The ranges, plus the last line of either text where only its line ending changed: the lines
 * between ranges are equal but for that one, which gains or loses its newline when a hunk sets
 * the final newline or adds lines after a last line that had none.
 */
function withLastLines(ranges: readonly ChangedRange[], oldLines: Lines, newLines: Lines): ChangedRange[] {
  const all = [...ranges];
  const oldLast = oldLines.length - 1;
  const newLast = newLines.length - 1;
  const add = (oldIndex: number, newIndex: number) => {
    if (oldLines.at(oldIndex) === newLines.at(newIndex)) return;
    if (all.some((range) => range.oldStart === oldIndex && range.oldLength === 1 && range.newStart === newIndex))
      return;
    all.push({ oldStart: oldIndex, oldLength: 1, newStart: newIndex, newLength: 1 });
  };
  if (oldLast >= 0) {
    const counterpart = unchangedCounterpart(ranges, oldLast, 'old');
    if (counterpart !== undefined) add(oldLast, counterpart);
  }
  if (newLast >= 0) {
    const counterpart = unchangedCounterpart(ranges, newLast, 'new');
    if (counterpart !== undefined) add(counterpart, newLast);
  }
  return all.sort((a, b) => a.oldStart - b.oldStart || a.newStart - b.newStart);
}

/** Where a line outside every range is on the other side, or undefined when a range covers it. */
function unchangedCounterpart(ranges: readonly ChangedRange[], index: number, side: 'old' | 'new'): number | undefined {
  let shift = 0;
  for (const range of ranges) {
    const [start, length, otherLength] =
      side === 'old'
        ? [range.oldStart, range.oldLength, range.newLength]
        : [range.newStart, range.newLength, range.oldLength];
    if (start <= index && index < start + length) return undefined;
    if (start + length <= index) shift += otherLength - length;
  }
  return index + shift;
}

/** Appends blocks, joining one that starts where the last one ends into it (adjacent ranges, a moved last line). */
function joinBlocks(blocks: Block[], more: readonly Block[]): void {
  for (const block of more) {
    const last = blocks[blocks.length - 1];
    if (
      last !== undefined &&
      last.oldStart + last.oldLength === block.oldStart &&
      last.newStart + last.newLength === block.newStart
    ) {
      last.oldLength += block.oldLength;
      last.newLength += block.newLength;
    } else {
      blocks.push({ ...block });
    }
  }
}

/** A long range without its equal head and tail, letting the event loop run as `clock` says. */
async function trim(oldLines: Lines, newLines: Lines, range: ChangedRange, clock: WorkBudget): Promise<ChangedRange> {
  let oldFirst = range.oldStart;
  let newFirst = range.newStart;
  let oldEnd = Math.min(range.oldStart + range.oldLength, oldLines.length);
  let newEnd = Math.min(range.newStart + range.newLength, newLines.length);
  while (oldFirst < oldEnd && newFirst < newEnd && oldLines.at(oldFirst) === newLines.at(newFirst)) {
    oldFirst += 1;
    newFirst += 1;
    if (clock.spend(SHOW_LINE_COST)) await clock.pause();
  }
  while (oldFirst < oldEnd && newFirst < newEnd && oldLines.at(oldEnd - 1) === newLines.at(newEnd - 1)) {
    oldEnd -= 1;
    newEnd -= 1;
    if (clock.spend(SHOW_LINE_COST)) await clock.pause();
  }
  return { oldStart: oldFirst, oldLength: oldEnd - oldFirst, newStart: newFirst, newLength: newEnd - newFirst };
}

/** The hunks around the blocks: CONTEXT equal lines on each side, and blocks closer than 2 × CONTEXT joined. */
async function hunksOf(
  blocks: readonly Block[],
  oldLines: Lines,
  newLines: Lines,
  clock: WorkBudget,
): Promise<DiffHunk[]> {
  const hunks: DiffHunk[] = [];
  let hunk: DiffHunk | undefined;
  let oldEnd = 0;
  /** Appends lines `from..to` of `lines` as `kind` lines; true when the event loop is due a turn. */
  const show = (kind: Kind, lines: Lines, from: number, to: number): boolean => {
    let text = '';
    for (let index = from; index < to; index += 1) {
      const line = lines.at(index);
      text += line.endsWith('\n') ? `${kind}${line}` : `${kind}${line}\n\\ No newline at end of file\n`;
    }
    hunk!.text += text;
    if (kind !== '+') hunk!.oldCount += to - from;
    if (kind !== '-') hunk!.newCount += to - from;
    return clock.spend((to - from) * SHOW_LINE_COST);
  };
  /** Shows a long run in pieces, letting the event loop run between them. */
  const showAll = async (kind: Kind, lines: Lines, from: number, to: number): Promise<void> => {
    for (let piece = from; piece < to; piece += SHOW_PIECE) {
      if (show(kind, lines, piece, Math.min(to, piece + SHOW_PIECE))) await clock.pause();
    }
  };
  for (const block of blocks) {
    if (hunk && block.oldStart - oldEnd <= 2 * CONTEXT) {
      await showAll(' ', oldLines, oldEnd, block.oldStart);
    } else {
      if (hunk) {
        await showAll(' ', oldLines, oldEnd, Math.min(oldLines.length, oldEnd + CONTEXT));
        hunks.push(hunk);
      }
      const lead = Math.min(CONTEXT, block.oldStart);
      hunk = { oldFirst: block.oldStart - lead, newFirst: block.newStart - lead, oldCount: 0, newCount: 0, text: '' };
      await showAll(' ', oldLines, block.oldStart - lead, block.oldStart);
    }
    await showAll('-', oldLines, block.oldStart, Math.min(oldLines.length, block.oldStart + block.oldLength));
    await showAll('+', newLines, block.newStart, Math.min(newLines.length, block.newStart + block.newLength));
    oldEnd = block.oldStart + block.oldLength;
  }
  if (hunk) {
    show(' ', oldLines, oldEnd, Math.min(oldLines.length, oldEnd + CONTEXT));
    hunks.push(hunk);
  }
  return hunks;
}

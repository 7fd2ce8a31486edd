// The line diff of one changed range: a minimal (LCS) diff while small and within budget, else one block replace.
import type { Block, ChangedRange, DiffBudget, Kind, Lines } from './diff-lines.ts';

/** Changed regions up to this many line pairs get a minimal (LCS) diff; larger ones a block replace. */
const MAX_LCS_CELLS = 250_000;

/**
 * A changed range as blocks of changed lines, its equal lines (common head, tail, LCS) left out.
 * Lines past the end of a text are none (see `Lines.slice`).
 */
export function diffRange(oldLines: Lines, newLines: Lines, range: ChangedRange, budget: DiffBudget): Block[] {
  let oldFirst = range.oldStart;
  let newFirst = range.newStart;
  let oldEnd = Math.min(range.oldStart + range.oldLength, oldLines.length);
  let newEnd = Math.min(range.newStart + range.newLength, newLines.length);
  while (oldFirst < oldEnd && newFirst < newEnd && oldLines.at(oldFirst) === newLines.at(newFirst)) {
    oldFirst += 1;
    newFirst += 1;
  }
  while (oldFirst < oldEnd && newFirst < newEnd && oldLines.at(oldEnd - 1) === newLines.at(newEnd - 1)) {
    oldEnd -= 1;
    newEnd -= 1;
  }
  const cells = (oldEnd - oldFirst) * (newEnd - newFirst);
  if (cells === 0 || cells > MAX_LCS_CELLS || cells > budget.cells) {
    if (oldEnd - oldFirst + (newEnd - newFirst) === 0) return [];
    return [{ oldStart: oldFirst, newStart: newFirst, oldLength: oldEnd - oldFirst, newLength: newEnd - newFirst }];
  }
  budget.cells -= cells;
  const kinds = lcsKinds(oldLines.slice(oldFirst, oldEnd), newLines.slice(newFirst, newEnd));
  const blocks: Block[] = [];
  let oldAt = oldFirst;
  let newAt = newFirst;
  let block: Block | undefined;
  for (const kind of kinds) {
    if (kind === ' ') {
      block = undefined;
      oldAt += 1;
      newAt += 1;
      continue;
    }
    if (block === undefined) {
      block = { oldStart: oldAt, newStart: newAt, oldLength: 0, newLength: 0 };
      blocks.push(block);
    }
    if (kind === '-') {
      block.oldLength += 1;
      oldAt += 1;
    } else {
      block.newLength += 1;
      newAt += 1;
    }
  }
  return blocks;
}

/** The kind of every line of a minimal diff (longest common subsequence) of two regions. */
function lcsKinds(before: readonly string[], after: readonly string[]): Kind[] {
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
  const kinds: Kind[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      kinds.push(' ');
      i += 1;
      j += 1;
    } else if (
      j >= after.length ||
      (i < before.length && suffix[(i + 1) * columns + j]! >= suffix[i * columns + j + 1]!)
    ) {
      kinds.push('-');
      i += 1;
    } else {
      kinds.push('+');
      j += 1;
    }
  }
  return kinds;
}

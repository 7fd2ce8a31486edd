// Finds a run of patch lines in a file's lines as Codex's seek_sequence does: exact first, then ever more forgiving.
import { INDEX_CHAR_COST, INDEX_LINE_COST, SEEK_COST, type WorkBudget } from '../../core/work-budget.ts';
import { LineIndex, LINES_PER_CHECK } from './line-index.ts';
import { passes } from './seek-passes.ts';

/** The first index in `sorted[low..high)` whose value is at least `value`. */
function lowerBound(sorted: Int32Array, low: number, high: number, value: number): number {
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function checkedIndex(lines: readonly string[], index: LineIndex | undefined): LineIndex {
  if (index === undefined) return new LineIndex(lines);
  if (index.lines !== lines) throw new Error('LineIndex belongs to another array of lines');
  return index;
}

/**
 * The first place in `from..last` where `pattern` occurs under pass `pass`. Candidates are the
 * positions of the pattern line with the fewest occurrences in range, so a pattern of common lines
 * (blank lines, braces) with one distinctive line is checked in a handful of places; a line that
 * does not occur at all rules the pass out at once.
 */
async function firstMatch(
  index: LineIndex,
  pass: number,
  pattern: readonly string[],
  from: number,
  last: number,
): Promise<number | undefined> {
  const work = index.work;
  const { idOf, ids, starts, positions } = index.built(pass, pattern) ?? (await index.pass(pass, pattern));
  const fold = passes[pass]!;
  const want = new Int32Array(pattern.length);
  let rarest = 0;
  let rarestLow = 0;
  let rarestHigh = 0;
  // Folding and looking a pattern line up costs what indexing a file line does.
  let cost = 0;
  for (let offset = 0; offset < pattern.length; offset += 1) {
    const text = pattern[offset]!;
    cost += INDEX_LINE_COST + text.length * INDEX_CHAR_COST;
    const id = idOf.get(fold(text));
    const low = id === undefined ? 0 : lowerBound(positions, starts[id]!, starts[id + 1]!, from + offset);
    const high = id === undefined ? 0 : lowerBound(positions, low, starts[id + 1]!, last + offset + 1);
    if (high === low) {
      // A line that occurs nowhere in range rules the pass out.
      work.spend(cost);
      return undefined;
    }
    want[offset] = id!;
    if (offset === 0 || high - low < rarestHigh - rarestLow) {
      rarest = offset;
      rarestLow = low;
      rarestHigh = high;
    }
    if (offset % LINES_PER_CHECK === LINES_PER_CHECK - 1) {
      if (work.spend(cost)) await work.pause();
      cost = 0;
    }
  }
  work.spend(cost);
  const length = want.length;
  for (let candidate = rarestLow; candidate < rarestHigh; candidate += 1) {
    const at = positions[candidate]! - rarest;
    let offset = 0;
    while (offset < length && ids[at + offset] === want[offset]) offset += 1;
    if (offset === length) {
      work.spend(length);
      return at;
    }
    if (work.spend(offset + 1)) await work.pause();
  }
  return undefined;
}

/** Whether `pattern` occurs at `at` under pass `pass`: folds only the lines it compares (each charged as indexing one). */
async function matchesAt(
  lines: readonly string[],
  pattern: readonly string[],
  at: number,
  pass: number,
  work: WorkBudget,
): Promise<boolean> {
  const fold = passes[pass]!;
  for (let offset = 0; offset < pattern.length; offset += 1) {
    if (fold(lines[at + offset]!) !== fold(pattern[offset]!)) {
      work.spend(((offset % LINES_PER_CHECK) + 1) * INDEX_LINE_COST);
      return false;
    }
    if (offset % LINES_PER_CHECK === LINES_PER_CHECK - 1 && work.spend(LINES_PER_CHECK * INDEX_LINE_COST))
      await work.pause();
  }
  work.spend((pattern.length % LINES_PER_CHECK) * INDEX_LINE_COST);
  return true;
}

/**
 * The index of the first place at or after `start` where `pattern` occurs in `lines`, trying every
 * position with one pass before the next pass: exact, ignoring trailing whitespace, ignoring
 * surrounding whitespace, then also folding Unicode punctuation. With `endOfFile` only the position
 * that ends at the last line is tried (Codex's code does exactly this, whatever its doc comment says).
 * An empty pattern matches at `start`. Throws WorkLimitReached when `index`'s budget runs out.
 */
export async function seekSequence(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
  index?: LineIndex,
): Promise<number | undefined> {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  const last = lines.length - pattern.length;
  const from = endOfFile ? last : Math.max(0, start);
  if (from > last) return undefined;
  const checked = checkedIndex(lines, index);
  if (checked.work.spend(SEEK_COST)) await checked.work.pause();
  for (let pass = 0; pass < passes.length; pass += 1) {
    if (endOfFile) {
      if (await matchesAt(lines, pattern, last, pass, checked.work)) return last;
      continue;
    }
    let first = from;
    if (pass === 0) {
      const near = scanNear(lines, pattern, from, last, checked.work);
      if (near.found) return near.at;
      first = near.at;
    }
    const at = await firstMatch(checked, pass, pattern, first, last);
    if (at !== undefined) return at;
  }
  return undefined;
}

/** Line comparisons an exact seek spends looking just after its start before it asks the index. */
const NEAR_SCAN_UNITS = 2048;

/**
 * An exact seek's first look: the places just after `from`, compared as strings, in order. Hunks
 * usually follow one another closely, so most are found here without indexing the file at all.
 * Answers the match, or the first place not yet tried.
 */
function scanNear(
  lines: readonly string[],
  pattern: readonly string[],
  from: number,
  last: number,
  work: WorkBudget,
): { found: boolean; at: number } {
  const head = pattern[0]!;
  let spent = 0;
  let at = from;
  for (; at <= last && spent < NEAR_SCAN_UNITS; at += 1) {
    spent += 1;
    if (lines[at] !== head) continue;
    let offset = 1;
    while (offset < pattern.length && lines[at + offset] === pattern[offset]) offset += 1;
    spent += offset;
    if (offset === pattern.length) {
      work.spend(spent);
      return { found: true, at };
    }
  }
  work.spend(spent);
  return { found: false, at };
}

/** Whether `pattern` occurs at exactly `at` under any of the passes of `seekSequence`. */
export async function sequenceMatchesAt(
  lines: readonly string[],
  pattern: readonly string[],
  at: number,
  index?: LineIndex,
): Promise<boolean> {
  if (at < 0 || at + pattern.length > lines.length) return false;
  const checked = checkedIndex(lines, index);
  if (checked.work.spend(SEEK_COST)) await checked.work.pause();
  for (let pass = 0; pass < passes.length; pass += 1) {
    if (await matchesAt(lines, pattern, at, pass, checked.work)) return true;
  }
  return false;
}

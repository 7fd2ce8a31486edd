// Finds a run of patch lines in a file's lines as Codex's seek_sequence does: exact first, then ever more forgiving.
import { INDEX_CHAR_COST, INDEX_LINE_COST, SEEK_COST, unlimitedWork, type WorkBudget } from '../../core/work-budget.ts';

/**
 * The passes, in order: the exact text, then the forgiving ones. Codex trims with Rust's notion of
 * whitespace; JavaScript's trim differs only at the margins (it also trims U+FEFF, not U+0085).
 */
const passes: readonly ((line: string) => string)[] = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  (line) => foldPunctuation(line.trim()),
];

/** The ASCII look-alike of one of Codex's typographic characters, or undefined for any other code unit. */
function asciiFor(code: number): string | undefined {
  if (code < 0xa0) return undefined;
  if ((code >= 0x2010 && code <= 0x2015) || code === 0x2212) return '-';
  if (code >= 0x2018 && code <= 0x201b) return "'";
  if (code >= 0x201c && code <= 0x201f) return '"';
  if (code === 0xa0 || (code >= 0x2002 && code <= 0x200a) || code === 0x202f || code === 0x205f || code === 0x3000)
    return ' ';
  return undefined;
}

/** Unicode dashes, quotes and odd spaces folded to their ASCII look-alikes (a loop: a regex callback is several times slower). */
export function foldPunctuation(line: string): string {
  let folded = '';
  let copied = 0;
  for (let index = 0; index < line.length; index += 1) {
    const ascii = asciiFor(line.charCodeAt(index));
    if (ascii === undefined) continue;
    folded += line.slice(copied, index) + ascii;
    copied = index + 1;
  }
  return copied === 0 ? line : folded + line.slice(copied);
}

/**
 * One pass's view of a file, for the lines some pattern has: each wanted (folded) text has an id,
 * each file line the id of its folded text or -1 when no pattern has it, and each id the
 * ascending positions of its lines. Comparing lines is then comparing integers, and the places a
 * pattern may start are read off the positions of its rarest line.
 */
interface PassIndex {
  /** Folded text of a wanted line → id. */
  idOf: Map<string, number>;
  /** The id of every file line, -1 for a line no pattern has. */
  ids: Int32Array;
  /** The positions of id `k` are `positions[starts[k]] .. positions[starts[k + 1] - 1]`, ascending. */
  starts: Int32Array;
  positions: Int32Array;
}

/** Work between two chances to pause in loops over lines. */
const LINES_PER_CHECK = 4096;

/**
 * The passes' indexes of one file's lines, each built the first time a seek needs it (the
 * forgiving ones only when an exact seek failed) and kept for the many seeks of a file with
 * hundreds of hunks. An index holds only the lines patterns have, so building it is one lookup
 * per file line in a table as small as the patterns: give `wanted` (every line of every pattern
 * to come) up front; a seek for other lines widens the index, reading the file again. Building
 * an index and every comparison are charged to `work`. The lines must not change while a
 * `LineIndex` is in use.
 */
export class LineIndex {
  private indexes: (PassIndex | undefined)[] = [];
  private readonly wanted: Set<string>;

  /** `wanted`, when a Set, becomes the index's own: it grows as seeks widen it. */
  constructor(
    readonly lines: readonly string[],
    readonly work: WorkBudget = unlimitedWork(),
    wanted: Iterable<string> = [],
  ) {
    this.wanted = wanted instanceof Set ? (wanted as Set<string>) : new Set(wanted);
  }

  /** Pass `pass`'s index, built so that it has every line of `pattern`. */
  async pass(pass: number, pattern: readonly string[]): Promise<PassIndex> {
    return this.built(pass, pattern) ?? (this.indexes[pass] = await this.build(pass));
  }

  /** Pass `pass`'s index when it is built and has every line of `pattern` (no promise to wait for). */
  built(pass: number, pattern: readonly string[]): PassIndex | undefined {
    let widened = false;
    for (const line of pattern) {
      if (this.wanted.has(line)) continue;
      this.wanted.add(line);
      widened = true;
    }
    if (widened) this.indexes = [];
    return this.indexes[pass];
  }

  private async build(pass: number): Promise<PassIndex> {
    const fold = passes[pass]!;
    const idOf = new Map<string, number>();
    // Folding and hashing a line costs more the longer it is: charged per line and per character.
    let cost = 0;
    let count = 0;
    for (const line of this.wanted) {
      const text = fold(line);
      if (!idOf.has(text)) idOf.set(text, idOf.size);
      cost += INDEX_LINE_COST + line.length * INDEX_CHAR_COST;
      if (++count % LINES_PER_CHECK === 0) {
        if (this.work.spend(cost)) await this.work.pause();
        cost = 0;
      }
    }
    const lines = this.lines;
    const ids = new Int32Array(lines.length);
    for (let line = 0; line < lines.length; line += 1) {
      const text = lines[line]!;
      ids[line] = idOf.get(fold(text)) ?? -1;
      cost += INDEX_LINE_COST + text.length * INDEX_CHAR_COST;
      if (line % LINES_PER_CHECK === LINES_PER_CHECK - 1) {
        if (this.work.spend(cost)) await this.work.pause();
        cost = 0;
      }
    }
    this.work.spend(cost);
    return withPositions(idOf, ids);
  }
}

/** Adds the positions of every id to an index (a counting sort of the wanted lines by id). */
function withPositions(idOf: Map<string, number>, ids: Int32Array): PassIndex {
  const count = idOf.size;
  const starts = new Int32Array(count + 1);
  for (let line = 0; line < ids.length; line += 1) {
    const id = ids[line]!;
    if (id >= 0) starts[id + 1]! += 1;
  }
  for (let id = 0; id < count; id += 1) starts[id + 1]! += starts[id]!;
  const fill = starts.slice(0, count);
  const positions = new Int32Array(starts[count]!);
  for (let line = 0; line < ids.length; line += 1) {
    const id = ids[line]!;
    if (id >= 0) positions[fill[id]!++] = line;
  }
  return { idOf, ids, starts, positions };
}

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

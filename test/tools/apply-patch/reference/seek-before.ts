// The reference for the property test in locator-equivalence.test.ts: seek.ts as it was before the work budget
// (commit 6e0c84b), verbatim: a per-pass index of the first pattern line, synchronous, without a budget.
// Finds a run of patch lines in a file's lines as Codex's seek_sequence does: exact first, then ever more forgiving.

/**
 * The forgiving passes after the exact one, in order. Codex trims with Rust's notion of whitespace;
 * JavaScript's trim differs only at the margins (it also trims U+FEFF, not U+0085).
 */
const passes: readonly ((line: string) => string)[] = [
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
 * The folded forms of one file's lines, and where each folded line occurs, computed at most once per
 * pass, so that the many seeks of a file with hundreds of hunks look candidates up instead of
 * scanning. Pass 0 is the exact text; the lines must not change while a `LineFolds` is in use.
 */
export class LineFolds {
  private readonly folded: (string | undefined)[][] = passes.map(() => []);
  private readonly positions: (Map<string, number[]> | undefined)[] = [];

  constructor(readonly lines: readonly string[]) {}

  /** The line at `index` as pass `pass` sees it. */
  at(pass: number, index: number): string {
    if (pass === 0) return this.lines[index]!;
    const cache = this.folded[pass - 1]!;
    let value = cache[index];
    if (value === undefined) {
      value = passes[pass - 1]!(this.lines[index]!);
      cache[index] = value;
    }
    return value;
  }

  /** Ascending indexes of the lines that pass `pass` sees as `line`. */
  indexesOf(pass: number, line: string): readonly number[] {
    let map = this.positions[pass];
    if (map === undefined) {
      map = new Map();
      for (let index = 0; index < this.lines.length; index += 1) {
        const key = this.at(pass, index);
        const list = map.get(key);
        if (list === undefined) map.set(key, [index]);
        else list.push(index);
      }
      this.positions[pass] = map;
    }
    return map.get(line) ?? [];
  }
}

/** Every pass's view of a pattern line: exact, then each fold. */
function passViews(pattern: readonly string[]): string[][] {
  return [[...pattern], ...passes.map((fold) => pattern.map(fold))];
}

function matchesAt(folds: LineFolds, pass: number, pattern: readonly string[], index: number): boolean {
  for (let offset = 0; offset < pattern.length; offset += 1) {
    if (folds.at(pass, index + offset) !== pattern[offset]) return false;
  }
  return true;
}

/** The first index in ascending `sorted` that is at least `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function checkedFolds(lines: readonly string[], folds: LineFolds | undefined): LineFolds {
  if (folds === undefined) return new LineFolds(lines);
  if (folds.lines !== lines) throw new Error('LineFolds belongs to another array of lines');
  return folds;
}

/**
 * The index of the first place at or after `start` where `pattern` occurs in `lines`, trying every
 * position with one pass before the next pass: exact, ignoring trailing whitespace, ignoring
 * surrounding whitespace, then also folding Unicode punctuation. With `endOfFile` only the position
 * that ends at the last line is tried (Codex's code does exactly this, whatever its doc comment says).
 * An empty pattern matches at `start`.
 */
export function seekSequence(
  lines: readonly string[],
  pattern: readonly string[],
  start: number,
  endOfFile: boolean,
  folds?: LineFolds,
): number | undefined {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return undefined;
  const last = lines.length - pattern.length;
  const from = endOfFile ? last : Math.max(0, start);
  const cache = checkedFolds(lines, folds);
  const views = passViews(pattern);
  for (let pass = 0; pass < views.length; pass += 1) {
    const view = views[pass]!;
    // Candidates are the lines whose folded form equals the pattern's first line, in file order.
    const candidates = cache.indexesOf(pass, view[0]!);
    for (let next = lowerBound(candidates, from); next < candidates.length; next += 1) {
      const index = candidates[next]!;
      if (index > last) break;
      if (matchesAt(cache, pass, view, index)) return index;
    }
  }
  return undefined;
}

/** Whether `pattern` occurs at exactly `index` under any of the passes of `seekSequence`. */
export function sequenceMatchesAt(
  lines: readonly string[],
  pattern: readonly string[],
  index: number,
  folds?: LineFolds,
): boolean {
  if (index < 0 || index + pattern.length > lines.length) return false;
  const cache = checkedFolds(lines, folds);
  return passViews(pattern).some((view, pass) => matchesAt(cache, pass, view, index));
}

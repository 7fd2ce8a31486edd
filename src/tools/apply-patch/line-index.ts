// One file's lines indexed for each pass of a seek: comparing lines is comparing integers, and a pattern is tried only where its rarest line is.
import { INDEX_CHAR_COST, INDEX_LINE_COST, unlimitedWork, type WorkBudget } from '../../core/work-budget.ts';
import { passes } from './seek-passes.ts';

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
export const LINES_PER_CHECK = 4096;

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

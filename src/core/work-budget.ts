// How much work locating a patch's hunks may take, and how often it lets the event loop run.

/**
 * The work one apply_patch call may spend locating its hunks, in line comparisons (reading a file
 * line into an index costs INDEX_LINE_COST of them and INDEX_CHAR_COST per character). A
 * comparison takes a few nanoseconds, so the budget is under a second of work; real patches
 * spend a small part of it (200 hunks in a 5,000-line file: about 200,000). A patch whose hunks
 * could start at very many places, none of them matching whole, reaches it and is answered
 * `patch_conflict` with `details.reason: "work_limit"` (docs/api.md).
 */
export const LOCATE_WORK_BUDGET = 200_000_000;

/** The cost of looking one file line up in a pass's index (on top of its characters), in line comparisons. */
export const INDEX_LINE_COST = 40;
/** The cost of folding and hashing one character of a file line, in line comparisons. */
export const INDEX_CHAR_COST = 1;

/**
 * The cost of one seek before it compares anything (its setup, its promises, its lookups: a few
 * microseconds), in line comparisons: a patch of very many tiny hunks is bounded too.
 */
export const SEEK_COST = 1000;

/** How long locating may hold the event loop before it lets timers, sockets and other requests run. */
export const SLICE_MS = 8;

/** Work between two looks at the clock: the clock is not free, and a unit is a few nanoseconds. */
const CHECK_EVERY_UNITS = 65_536;

/** Thrown when the budget is spent; the caller names the hunk it was locating. */
export class WorkLimitReached extends Error {
  constructor(readonly limit: number) {
    super(`locating the hunks took more than ${limit} line comparisons`);
    this.name = 'WorkLimitReached';
  }
}

type Later = (run: () => void) => unknown;
const later: Later = (globalThis as { setImmediate?: Later }).setImmediate ?? ((run: () => void) => setTimeout(run, 0));

/** Resolves after the event loop has had a turn (timers, I/O, other requests). */
export function letEventLoopRun(): Promise<void> {
  return new Promise((resolve) => later(resolve));
}

/**
 * A budget of line comparisons shared by everything one call locates, and the clock of the
 * current slice. Hot loops call `spend(units)`; when it answers true, they `await pause()`.
 */
export class WorkBudget {
  private spentUnits = 0;
  private nextCheck = CHECK_EVERY_UNITS;
  private due = false;
  private sliceEnds: number;

  constructor(
    readonly limit: number = LOCATE_WORK_BUDGET,
    private readonly sliceMs: number = SLICE_MS,
  ) {
    this.sliceEnds = performance.now() + sliceMs;
  }

  get spent(): number {
    return this.spentUnits;
  }

  /**
   * Counts `units` of work; throws WorkLimitReached past the limit; true when the slice is over,
   * and from then on until `pause()` (so that a caller that cannot pause just then loses nothing).
   */
  spend(units: number): boolean {
    this.spentUnits += units;
    if (this.spentUnits > this.limit) throw new WorkLimitReached(this.limit);
    if (this.due) return true;
    if (this.spentUnits < this.nextCheck) return false;
    this.nextCheck = this.spentUnits + CHECK_EVERY_UNITS;
    this.due = performance.now() >= this.sliceEnds;
    return this.due;
  }

  /** Lets the event loop run, then starts a new slice. */
  async pause(): Promise<void> {
    await letEventLoopRun();
    this.due = false;
    this.sliceEnds = performance.now() + this.sliceMs;
  }
}

/** A budget that never runs out, for callers that locate text they already trust (tests, tools). */
export function unlimitedWork(): WorkBudget {
  return new WorkBudget(Number.POSITIVE_INFINITY);
}

/** Runs the steps of a generator that yields where it could pause (a parser's), to its end. */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs the steps of such a generator, letting the event loop run when `clock` says a slice is
 * over; each step counts as `stepCost` units of it.
 */
export async function runStepsSliced<T>(
  steps: Generator<void, T, void>,
  clock: WorkBudget,
  stepCost: number,
): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (clock.spend(stepCost)) await clock.pause();
  }
}

// The group commit of usage records: one transaction for calls that end together, soon or within DEFERRED_RECORD_MS.

/**
 * How long the record of a call that changed nothing may wait for its group commit (docs/api.md
 * "Metering of calls that change nothing": at most 50 ms). Records that must be durable before
 * their call answers are committed at the next turn of the event loop, with any waiting here.
 */
export const DEFERRED_RECORD_MS = 20;

export class GroupCommit<Item> {
  /** Items waiting for the next commit, with how to tell their callers it is done. */
  private waiting: { item: Item; done: () => void }[] = [];
  /** The next commit, when one is scheduled: at the next turn (`soon`) or within DEFERRED_RECORD_MS. */
  private scheduled: 'soon' | 'later' | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** `commit` writes a batch in one transaction; it never throws (a failure is its own to report). */
  constructor(private readonly commit: (batch: Item[]) => void) {}

  /** Adds an item to the next commit; resolves once it is committed. */
  add(item: Item, deferrable: boolean): Promise<void> {
    return new Promise((done) => {
      this.waiting.push({ item, done });
      this.schedule(deferrable ? 'later' : 'soon');
    });
  }

  /** Commits every item waiting, now. */
  flush(): void {
    this.scheduled = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return;
    this.commit(batch.map((waiting) => waiting.item));
    for (const waiting of batch) waiting.done();
  }

  private schedule(when: 'soon' | 'later'): void {
    if (this.scheduled === 'soon' || this.scheduled === when) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.scheduled = when;
    if (when === 'later') {
      this.timer = setTimeout(() => this.flush(), DEFERRED_RECORD_MS);
      return;
    }
    this.timer = undefined;
    const later =
      (globalThis as { setImmediate?: (work: () => void) => unknown }).setImmediate ??
      ((work: () => void) => setTimeout(work, 0));
    later(() => {
      if (this.scheduled === 'soon') this.flush();
    });
  }
}

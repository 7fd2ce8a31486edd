// Blobs a commit may be about to name, which the sweeper must leave alone: those being written for
// a commit in flight (held until it lands or fails), and those stored or found ahead of a commit
// that names them later (a runner's uploads, an archive, an import: held for a while).

export class BlobPins {
  /** Holders per key: commits in flight. */
  private readonly held = new Map<string, number>();
  /** Until when a key is kept, by key. */
  private readonly until = new Map<string, number>();
  private lastPrune = 0;

  constructor(
    /** How long a blob stored ahead of its commit is kept from the sweeper. */
    private readonly keepMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps `key` until the returned function is called (once). */
  hold(key: string): () => void {
    return this.holdMany([key]);
  }

  /** Keeps every key (once for each time it is given) until the returned function is called (once). */
  holdMany(keys: readonly string[]): () => void {
    for (const key of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of keys) {
        const left = (this.held.get(key) ?? 1) - 1;
        if (left > 0) this.held.set(key, left);
        else this.held.delete(key);
      }
    };
  }

  /** Keeps `key` for keepMs from now. */
  keep(key: string): void {
    this.keepMany([key]);
  }

  /** Keeps every key for keepMs from now. */
  keepMany(keys: readonly string[]): void {
    const now = this.now();
    for (const key of keys) this.until.set(key, now + this.keepMs);
    // Expired keeps are dropped now and then, so the map holds only the last keepMs of keys.
    if (now - this.lastPrune > this.keepMs) {
      this.lastPrune = now;
      for (const [other, until] of this.until) if (until <= now) this.until.delete(other);
    }
  }

  isPinned(key: string): boolean {
    if (this.held.has(key)) return true;
    const until = this.until.get(key);
    return until !== undefined && until > this.now();
  }
}

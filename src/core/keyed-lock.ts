// Serialises async work per key inside one process, so racing writers queue instead of retrying.

export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /**
   * Runs `work` once it has the turn of every key. The turns are all taken at once (nothing
   * else queues in between), so two callers never wait on each other in a cycle.
   */
  async runMany<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A key no one holds takes `current` as its tail: thousands of keys (an archive's blobs) then
    // cost no promise each, and work starts without waiting a turn.
    const turns = new Map<string, Promise<void>>();
    const earlier: Promise<void>[] = [];
    for (const key of keys) {
      if (turns.has(key)) continue;
      const previous = this.tails.get(key);
      const tail = previous === undefined ? current : previous.then(() => current);
      if (previous !== undefined) earlier.push(previous);
      this.tails.set(key, tail);
      turns.set(key, tail);
    }
    if (earlier.length > 0) await Promise.all(earlier);
    try {
      return await work();
    } finally {
      release();
      for (const [key, tail] of turns) if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

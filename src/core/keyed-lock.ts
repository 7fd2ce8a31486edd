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
    const turns = [...new Set(keys)].map((key) => {
      const previous = this.tails.get(key) ?? Promise.resolve();
      const tail = previous.then(() => current);
      this.tails.set(key, tail);
      return { key, previous, tail };
    });
    await Promise.all(turns.map((turn) => turn.previous));
    try {
      return await work();
    } finally {
      release();
      for (const { key, tail } of turns) if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

// The fs object store's per-key turns: writes and deletes of a key run one at a time, and a
// journal's objects can tell whether anything waits on their key after them (`chain`).

/**
 * One promise chain per key: writes and deletes of a key run one at a time, which makes the
 * check-then-rename of `ifMatch` / `ifNoneMatch` atomic within this process. Two processes
 * sharing one data dir are not serialised against each other. Unlike core's KeyedLock, a key's
 * chain is visible: the store compares it to the one a journal holds.
 */
export class KeyLocks {
  readonly #keyLocks = new Map<string, Promise<unknown>>();

  /** The key's chain, the settling of its last write or delete; undefined when none is running. */
  chain(key: string): Promise<unknown> | undefined {
    return this.#keyLocks.get(key);
  }

  /** Runs `task` once every key's earlier writes and deletes have ended, holding all of them meanwhile. */
  async runAll<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const previous: Promise<unknown>[] = [];
    for (const key of keys) {
      const chain = this.#keyLocks.get(key);
      if (chain !== undefined) previous.push(chain);
    }
    const result = previous.length === 0 ? task() : Promise.allSettled(previous).then(task);
    const settled = result.catch(() => undefined);
    for (const key of keys) this.#keyLocks.set(key, settled);
    try {
      return await result;
    } finally {
      for (const key of keys) if (this.#keyLocks.get(key) === settled) this.#keyLocks.delete(key);
    }
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#keyLocks.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const settled = result.catch(() => undefined);
    this.#keyLocks.set(key, settled);
    try {
      return await result;
    } finally {
      // Only the last writer in the chain removes it, so the map does not grow with every key.
      if (this.#keyLocks.get(key) === settled) this.#keyLocks.delete(key);
    }
  }
}

// Group commit: manifest commits that arrive in the same turn of the event loop share one
// transaction, each inside a savepoint of its own. A commit that fails (a precondition, a
// deleted workspace) rolls back alone and rejects alone; the others commit together, so sixteen
// concurrent writers pay for one commit rather than sixteen.
import type { SqlDatabase } from '../storage/sql-database.ts';

interface Queued {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const nextTurn: (work: () => void) => unknown =
  (globalThis as { setImmediate?: (work: () => void) => unknown }).setImmediate ??
  ((work: () => void) => setTimeout(work, 0));

export class CommitGroup {
  private queued: Queued[] = [];

  constructor(private readonly db: SqlDatabase) {}

  /**
   * Runs `work` (synchronous database work) in the next group's transaction; resolves with its
   * answer once that transaction has committed, or rejects with what it threw (its statements
   * rolled back) or with the failure of the commit itself.
   */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) nextTurn(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 1) {
      const [only] = batch as [Queued];
      let value: unknown;
      try {
        value = this.db.transaction(only.work);
      } catch (error) {
        only.reject(error);
        return;
      }
      only.resolve(value);
      return;
    }
    const outcomes: ({ value: unknown } | { error: unknown })[] = [];
    try {
      this.db.transaction(() => {
        for (const item of batch) {
          try {
            // A nested transaction is a savepoint: a failure rolls back this commit's statements only.
            outcomes.push({ value: this.db.transaction(item.work) });
          } catch (error) {
            outcomes.push({ error });
          }
        }
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if ('error' in outcome) item.reject(outcome.error);
      else item.resolve(outcome.value);
    });
  }
}

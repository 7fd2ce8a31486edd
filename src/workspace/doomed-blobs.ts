// A reader's side of a family sweep of a shared store (family-sweep.ts): the contents the family
// may be deleting, which this database said it does not need. Until the family lets them go, a
// write or lookup of one of them here (something is about to name it) first asks the family to
// keep it, or waits for its deletion to land and then writes it again. Kept in SQL, so a restart of
// the reader between its answer and the family's delete still asks.
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { StoreFamilies } from './store-families.ts';

const statements = `
CREATE TABLE IF NOT EXISTS doomed_blobs (
  store TEXT NOT NULL,
  hash TEXT NOT NULL,
  round INTEGER NOT NULL,
  PRIMARY KEY (store, hash)
) WITHOUT ROWID;
`;

export class DoomedBlobs {
  /** `store/hash` of every doomed content, mirrored from SQL: asked on every blob write. */
  private readonly doomed = new Set<string>();

  constructor(
    private readonly db: SqlDatabase,
    private readonly families: StoreFamilies | undefined,
  ) {
    db.script(statements);
    for (const row of db.query<{ store: string; hash: string }>('SELECT store, hash FROM doomed_blobs'))
      this.doomed.add(`${row.store}/${row.hash}`);
  }

  /**
   * Records that round `round` of the family's sweep of `store` may delete `hashes`; records of an
   * earlier round, whose release was lost, go (a family sweeps one round at a time).
   */
  doom(store: string, round: number, hashes: readonly string[]): void {
    this.db.transaction(() => {
      for (const row of this.db.query<{ hash: string }>(
        'SELECT hash FROM doomed_blobs WHERE store = ? AND round < ?',
        store,
        round,
      ))
        this.doomed.delete(`${store}/${row.hash}`);
      this.db.query('DELETE FROM doomed_blobs WHERE store = ? AND round < ?', store, round);
      for (const hash of hashes) {
        this.db.query('INSERT OR REPLACE INTO doomed_blobs (store, hash, round) VALUES (?, ?, ?)', store, hash, round);
        this.doomed.add(`${store}/${hash}`);
      }
    });
  }

  /** The family's round is over: these are deleted or kept, and no longer need asking about. */
  release(store: string, hashes: readonly string[]): void {
    this.db.transaction(() => {
      for (const hash of hashes) {
        this.db.query('DELETE FROM doomed_blobs WHERE store = ? AND hash = ?', store, hash);
        this.doomed.delete(`${store}/${hash}`);
      }
    });
  }

  /**
   * Called once a content is pinned for something about to name it: when a sweep may be deleting
   * it, asks the family to keep it (or waits for the delete, so the write that follows lands after
   * it). Undefined when there is nothing to wait for, which is almost always.
   */
  claim(store: string, hash: string): Promise<void> | undefined {
    if (this.doomed.size === 0 || !this.doomed.has(`${store}/${hash}`) || this.families === undefined) return undefined;
    return this.families.rescue(store, hash).then(() => this.release(store, [hash]));
  }
}

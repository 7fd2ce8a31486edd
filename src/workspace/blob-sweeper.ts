// Reclaims contents that no workspace refers to any more: mark and sweep, per store (the object
// prefix a family of forks shares).
//
// A blob is live while an entry of a workspace of its store names it, or something registered
// with `references` does (history's map of contents hashed into git, which checkpoints restore
// from). A blob found unreferenced is recorded with the time it was first found so; once it has
// stayed unreferenced for the grace period it is deleted, unless a commit may be about to name it
// (BlobStore pins it) or the references changed meanwhile: the live set is computed again
// whenever a commit, fork or delete changed the store's workspaces, and checked in turn with the
// blob's writes. Killed half-way, a sweep leaves every referenced blob: it only ever deletes
// unreferenced ones, and its records are remade by the next.
import { listKeys, MAX_DELETE_BATCH, type ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { BlobStore } from './blob-store.ts';

const statements = `
CREATE TABLE IF NOT EXISTS unreferenced_blobs (
  store TEXT NOT NULL,
  hash TEXT NOT NULL,
  since INTEGER NOT NULL,
  PRIMARY KEY (store, hash)
) WITHOUT ROWID;
`;

/** What a sweep learns of a store from the workspaces. */
export interface StoreState {
  /** Changes whenever the store's workspaces or their entries change. */
  key: string;
  /** Every blob hash the store's workspaces refer to now. */
  live(): Set<string>;
}

export interface SweepResult {
  stores: number;
  /** Blobs looked at. */
  examined: number;
  deleted: number;
}

export class BlobSweeper {
  /** Each store's state key when it was last swept (in memory: after a restart every store is due once). */
  private readonly swept = new Map<string, string>();

  constructor(
    private readonly db: SqlDatabase,
    private readonly objects: ObjectStore,
    private readonly blobs: BlobStore,
    private readonly state: (store: string) => StoreState,
    private readonly now: () => number = Date.now,
  ) {
    db.script(statements);
  }

  /**
   * Whether a sweep of `stores` could delete anything: a store changed since its last sweep, or
   * holds contents found unreferenced whose grace may have run out.
   */
  due(stores: readonly string[]): boolean {
    return stores.some(
      (store) =>
        this.swept.get(store) !== this.state(store).key ||
        this.db.query('SELECT hash FROM unreferenced_blobs WHERE store = ? LIMIT 1', store).length > 0,
    );
  }

  /** Forgets a store deleted whole. */
  forgetStore(store: string): void {
    this.swept.delete(store);
    this.db.query('DELETE FROM unreferenced_blobs WHERE store = ?', store);
  }

  /** Sweeps each of `stores` in turn; `stillOwned` is asked with each delete, which it may stop. */
  async sweep(
    stores: readonly string[],
    graceMs: number,
    stillOwned: (store: string) => boolean = () => true,
  ): Promise<SweepResult> {
    const result: SweepResult = { stores: stores.length, examined: 0, deleted: 0 };
    for (const store of stores) await this.sweepStore(store, graceMs, result, stillOwned);
    return result;
  }

  private async sweepStore(
    store: string,
    graceMs: number,
    result: SweepResult,
    stillOwned: (store: string) => boolean,
  ): Promise<void> {
    // What the store was when the sweep began: a change after that makes it due again.
    this.swept.set(store, this.state(store).key);
    let known: StoreState | undefined;
    let live = new Set<string>();
    const liveNow = () => {
      const state = this.state(store);
      if (known?.key !== state.key) {
        known = state;
        live = state.live();
      }
      return live;
    };
    const since = new Map(
      this.db
        .query<{ hash: string; since: number }>('SELECT hash, since FROM unreferenced_blobs WHERE store = ?', store)
        .map((row) => [row.hash, row.since]),
    );
    const seen = new Set<string>();
    const prefix = `ws/${store}/blobs/`;
    let cursor: string | undefined;
    do {
      const page = await listKeys(this.objects, prefix, cursor === undefined ? {} : { cursor });
      cursor = page.cursor;
      const now = this.now();
      const due: string[] = [];
      for (const key of page.keys) {
        const hash = key.slice(key.lastIndexOf('/') + 1);
        result.examined += 1;
        if (liveNow().has(hash)) continue;
        seen.add(hash);
        const first = since.get(hash);
        if (first === undefined) {
          since.set(hash, now);
          this.db.query(
            'INSERT OR REPLACE INTO unreferenced_blobs (store, hash, since) VALUES (?, ?, ?)',
            store,
            hash,
            now,
          );
        }
        if (now - (first ?? now) >= graceMs) due.push(hash);
      }
      // A page's due blobs go in one request (a page holds at most MAX_DELETE_BATCH objects).
      for (let at = 0; at < due.length; at += MAX_DELETE_BATCH) {
        const batch = due.slice(at, at + MAX_DELETE_BATCH);
        const deleted = await this.blobs.sweep(store, batch, (hash) => stillOwned(store) && !liveNow().has(hash));
        result.deleted += deleted.length;
        for (const hash of deleted) seen.delete(hash);
      }
    } while (cursor !== undefined);
    // Records of blobs referenced again, or gone, go: the next time one is unreferenced, its grace starts over.
    for (const hash of since.keys())
      if (!seen.has(hash)) this.db.query('DELETE FROM unreferenced_blobs WHERE store = ? AND hash = ?', store, hash);
  }
}

// What one database does to reclaim contents: it sweeps the stores only its own workspaces read
// (blob-sweeper.ts), and takes part in the family sweep of those it shares with forks in other
// databases (shared-store-reader.ts, family-sweep.ts). Both ask it the same question: what do the
// workspaces of a store refer to now.
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { BlobStore } from './blob-store.ts';
import { BlobSweeper, type StoreState, type SweepResult } from './blob-sweeper.ts';
import type { DoomedBlobs } from './doomed-blobs.ts';
import type { EntryCache } from './entry-cache.ts';
import type { ForkReceiver } from './fork-transfer.ts';
import type { ManifestEntry } from './manifest-entry.ts';
import { SharedStoreReader } from './shared-store-reader.ts';
import type { StoreFamilies } from './store-families.ts';

export interface StoreSweepParts {
  db: SqlDatabase;
  objects: ObjectStore;
  blobs: BlobStore;
  doomed: DoomedBlobs;
  entryCache: EntryCache<ManifestEntry>;
  forks: ForkReceiver;
  families: StoreFamilies | undefined;
}

export class StoreSweeps {
  private readonly sweeper: BlobSweeper;
  private readonly referenceListeners: ((uids: readonly string[]) => Iterable<string>)[] = [];
  /** This database's part in the family sweeps of the stores it shares with others. */
  readonly shared: SharedStoreReader;

  constructor(private readonly parts: StoreSweepParts) {
    const { db, objects, blobs, doomed, forks, families } = parts;
    this.sweeper = new BlobSweeper(db, objects, blobs, (store) => this.storeState(store));
    this.shared = new SharedStoreReader({
      db,
      blobs,
      doomed,
      families,
      state: (store) => this.storeState(store),
      isShared: (store) => forks.isShared(store),
      receivingFor: (uid) => forks.pendingFor(uid),
      abandon: (uid) => forks.abandon(uid),
    });
  }

  /** Runs `listener` with the uids of a store's workspaces when a sweep asks what they refer to besides their entries. */
  onReferences(listener: (uids: readonly string[]) => Iterable<string>): void {
    this.referenceListeners.push(listener);
  }

  /**
   * Deletes contents no workspace has referred to for `graceMs` from the stores only this database
   * reads, and tells the family of each shared store whose references changed here.
   */
  async sweep(graceMs: number): Promise<SweepResult> {
    // A store shared meanwhile (a fork began) is no longer this sweeper's: checked before each delete.
    const result = await this.sweeper.sweep(this.ownStores(), graceMs, (store) => !this.parts.forks.isShared(store));
    await this.shared.tellChanges();
    return result;
  }

  /** Whether `sweep` could delete anything now, or has a family to tell. */
  due(): boolean {
    return this.sweeper.due(this.ownStores()) || this.shared.changed();
  }

  /** Forgets a store deleted whole. */
  forgetStore(store: string): void {
    this.sweeper.forgetStore(store);
  }

  private ownStores(): string[] {
    return this.parts.db
      .query<{ store: string }>('SELECT DISTINCT coalesce(store, uid) AS store FROM workspaces')
      .map((row) => row.store)
      .filter((store) => !this.parts.forks.isShared(store));
  }

  private storeState(store: string): StoreState {
    const { db, entryCache } = this.parts;
    const uids = db
      .query<{ uid: string }>(
        'SELECT uid FROM workspaces WHERE store = ? OR (store IS NULL AND uid = ?) ORDER BY uid',
        store,
        store,
      )
      .map((row) => row.uid);
    return {
      key: uids.map((uid) => `${uid}#${entryCache.generation(uid)}`).join(','),
      live: () => {
        const live = new Set<string>();
        for (const uid of uids)
          for (const row of db.query<{ blob: string }>(
            'SELECT DISTINCT blob FROM entries WHERE workspace = ? AND blob IS NOT NULL',
            uid,
          ))
            live.add(row.blob);
        for (const listener of this.referenceListeners) for (const hash of listener(uids)) live.add(hash);
        return live;
      },
    };
  }
}

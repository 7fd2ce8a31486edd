// What one database does for the family sweep of a store it shares with others (family-sweep.ts):
// it answers which contents it still needs, records the rest as doomed until the family lets them
// go (doomed-blobs.ts), and tells the family when what it refers to changed, so a sweep is planned.
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { StoreState } from './blob-sweeper.ts';
import type { BlobStore } from './blob-store.ts';
import type { DoomedBlobs } from './doomed-blobs.ts';
import type { StoreFamilies } from './store-families.ts';

/** How a database answers for one reader of a shared store. */
export interface SharedBlobCheck {
  /** `reading`: the incarnation reads the store here; `receiving`: it is a fork still arriving; `absent`: neither. */
  reader: 'reading' | 'receiving' | 'absent';
  /** Of the hashes asked about, those this database needs kept. */
  needed: string[];
}

export interface SharedStoreParts {
  db: SqlDatabase;
  blobs: BlobStore;
  doomed: DoomedBlobs;
  families: StoreFamilies | undefined;
  /** What the database's workspaces of a store refer to (the blob sweeper's view). */
  state: (store: string) => StoreState;
  isShared: (store: string) => boolean;
  /** How long ago a fork under this uid began arriving (ms), or undefined when none is. */
  receivingFor: (uid: string) => number | undefined;
  /** Drops a fork that stopped arriving, so it can never be adopted. */
  abandon: (uid: string) => void;
}

/**
 * A fork still arriving this long after it began is taken as abandoned (its sender died): a family
 * sweep asking about it drops it, rather than wait for it forever. Forks of 100,000 files take seconds.
 */
export const ABANDONED_FORK_MS = 10 * 60 * 1000;

export class SharedStoreReader {
  /** Each shared store's live set, by the state key it was computed for. */
  private readonly live = new Map<string, { key: string; hashes: Set<string> }>();
  /** Each shared store's state key when the family was last told of a change. */
  private readonly told = new Map<string, string>();

  constructor(private readonly parts: SharedStoreParts) {}

  /**
   * Answers a family sweep of `store` for the incarnation `uid`: which of `hashes` this database
   * needs (an entry or a checkpoint names it, or a commit may be about to), recording the rest of
   * `doom` as doomed in round `round`. Synchronous: nothing else runs between the answer and the record.
   */
  check(
    store: string,
    uid: string,
    round: number,
    hashes: readonly string[],
    doom: readonly string[],
  ): SharedBlobCheck {
    const { db, blobs, doomed } = this.parts;
    const receiving = this.parts.receivingFor(uid);
    if (receiving !== undefined) {
      if (receiving < ABANDONED_FORK_MS) return { reader: 'receiving', needed: [] };
      // Dropped in the same step as the answer: the family may then delete what its rows named.
      this.parts.abandon(uid);
      return { reader: 'absent', needed: [] };
    }
    const reads = db.query('SELECT uid FROM workspaces WHERE uid = ? AND coalesce(store, uid) = ? LIMIT 1', uid, store);
    if (reads.length === 0) return { reader: 'absent', needed: [] };
    const live = this.liveSet(store);
    const needed = hashes.filter((hash) => live.has(hash) || blobs.isPinned(store, hash));
    const kept = new Set(needed);
    doomed.doom(
      store,
      round,
      doom.filter((hash) => !kept.has(hash)),
    );
    return { reader: 'reading', needed };
  }

  /** The family's round is over for these contents. */
  release(store: string, hashes: readonly string[]): void {
    this.parts.doomed.release(store, hashes);
  }

  /** Whether a shared store's references changed since its family was last told. */
  changed(): boolean {
    return this.changedStores().length > 0;
  }

  /** Tells each family whose store's references changed here (a failed call is retried at the next sweep). */
  async tellChanges(): Promise<void> {
    const families = this.parts.families;
    if (families === undefined) return;
    for (const { store, key } of this.changedStores()) {
      await families.changed(store);
      this.told.set(store, key);
    }
  }

  private changedStores(): { store: string; key: string }[] {
    if (this.parts.families === undefined) return [];
    return this.parts.db
      .query<{ store: string }>('SELECT DISTINCT coalesce(store, uid) AS store FROM workspaces')
      .filter((row) => this.parts.isShared(row.store))
      .map((row) => ({ store: row.store, key: this.parts.state(row.store).key }))
      .filter(({ store, key }) => this.told.get(store) !== key);
  }

  private liveSet(store: string): Set<string> {
    const state = this.parts.state(store);
    const known = this.live.get(store);
    if (known?.key === state.key) return known.hashes;
    const hashes = state.live();
    this.live.set(store, { key: state.key, hashes });
    return hashes;
  }
}

// A fork between two databases (the Cloudflare home, where each workspace's object has its own):
// the source reads a snapshot of its rows in one synchronous step; the receiving side takes them in
// batches under the fork's new uid, which no workspace row names until the last call adopts it, so
// a fork half sent is never seen, and the next fork to the same name clears what it left.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ManifestEntry } from './manifest.ts';
import type { StoreFamilies, StoreReader } from './store-families.ts';
import {
  assertWorkspaceId,
  forkedFrom,
  storeOf,
  type ForkedWorkspace,
  type WorkspaceInfo,
  type WorkspaceRows,
} from './workspace-rows.ts';

/** A manifest row as it travels. */
export type ForkedEntry = ManifestEntry & { parent: string };

// shared_stores: stores a fork in another database also reads. This database cannot see when
// that fork is deleted, so such a store is never deleted with a workspace of this one.
const statements = `
CREATE TABLE IF NOT EXISTS pending_forks (
  uid TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  store TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS shared_stores (
  store TEXT PRIMARY KEY
) WITHOUT ROWID;
`;

export class ForkReceiver {
  constructor(
    private readonly db: SqlDatabase,
    /** Removes every row kept under a uid (entries, history): what a deleted workspace's listeners do. */
    private readonly forget: (uid: string) => void,
  ) {
    db.script(statements);
    // Databases made before store families have no store column: their pending forks' stores are unknown.
    try {
      db.query('SELECT store FROM pending_forks LIMIT 0');
    } catch {
      db.script('ALTER TABLE pending_forks ADD COLUMN store TEXT');
    }
  }

  /**
   * Starts receiving under `uid` a fork of `store`, clearing any fork this database was receiving
   * before: answers those dropped, with their stores (null in rows made before stores were kept).
   */
  begin(uid: string, store: string): { uid: string; store: string | null }[] {
    return this.db.transaction(() => {
      const dropped = this.db.query<{ uid: string; store: string | null }>('SELECT uid, store FROM pending_forks');
      for (const stale of dropped) {
        this.db.query('DELETE FROM entries WHERE workspace = ?', stale.uid);
        this.forget(stale.uid);
      }
      this.db.query('DELETE FROM pending_forks');
      this.db.query(
        'INSERT INTO pending_forks (uid, created_at, store) VALUES (?, ?, ?)',
        uid,
        new Date().toISOString(),
        store,
      );
      return dropped;
    });
  }

  entries(uid: string, entries: readonly ForkedEntry[]): void {
    this.db.transaction(() => {
      this.assertPending(uid);
      for (const entry of entries) {
        this.db.query(
          'INSERT INTO entries (workspace, path, parent, type, blob, target, size, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          uid,
          entry.path,
          entry.parent,
          entry.type,
          entry.blob,
          entry.target,
          entry.size,
          entry.version,
        );
      }
    });
  }

  /** Inside the transaction that adopts the fork: it must be the one being received. */
  finish(uid: string): void {
    this.assertPending(uid);
    this.db.query('DELETE FROM pending_forks WHERE uid = ?', uid);
  }

  /** Records that a workspace of another database reads `store` (a fork sent or received). */
  markShared(store: string): void {
    this.db.query('INSERT OR IGNORE INTO shared_stores (store) VALUES (?)', store);
  }

  isShared(store: string): boolean {
    return this.db.query('SELECT store FROM shared_stores WHERE store = ?', store).length > 0;
  }

  isPending(uid: string): boolean {
    return this.db.query('SELECT uid FROM pending_forks WHERE uid = ?', uid).length > 0;
  }

  /** How long ago the fork under `uid` began arriving (ms), or undefined when none is. */
  pendingFor(uid: string, now = Date.now()): number | undefined {
    const row = this.db.query<{ created_at: string }>('SELECT created_at FROM pending_forks WHERE uid = ?', uid)[0];
    return row === undefined ? undefined : now - Date.parse(row.created_at);
  }

  /** Drops a fork that stopped arriving, with what it received: adopting it later is refused. */
  abandon(uid: string): void {
    this.db.transaction(() => {
      if (!this.isPending(uid)) return;
      this.db.query('DELETE FROM entries WHERE workspace = ?', uid);
      this.forget(uid);
      this.db.query('DELETE FROM pending_forks WHERE uid = ?', uid);
    });
  }

  assertPending(uid: string): void {
    if (!this.isPending(uid))
      throw new ToolError('conflict', 'Another fork to this workspace started meanwhile; retry the fork.', {});
  }
}

/** Both ends of a fork between databases, as the home's calls between them run it (see the top of this file). */
export class ForkTransfer {
  constructor(
    private readonly db: SqlDatabase,
    private readonly rows: WorkspaceRows,
    private readonly forks: ForkReceiver,
    private readonly families: StoreFamilies | undefined,
  ) {}

  /** A fork's source as another database receives it: its row's part, its uid and its entries, read at once. */
  forkSnapshot(from: string): { uid: string; workspace: ForkedWorkspace; entries: ForkedEntry[] } {
    const source = this.rows.existing(from);
    const workspace = forkedFrom(source);
    this.forks.markShared(workspace.store);
    return { uid: source.uid, workspace, entries: forkEntries(this.db, source.uid) };
  }

  /** The incarnation and store of a workspace about to be forked to another database. */
  forkSource(from: string): { uid: string; store: string } {
    const source = this.rows.existing(from);
    return { uid: source.uid, store: storeOf(source) };
  }

  /**
   * Adds a fork (and its source) to the readers of the shared `store` before the source's rows
   * are read for it: from then on the store outlives the source, whatever becomes of it, and a
   * family sweep under way deletes nothing (see family-sweep.ts).
   */
  async joinStoreFamily(store: string, readers: readonly StoreReader[]): Promise<void> {
    await this.families?.join(store, readers);
  }

  /**
   * Starts receiving a fork named `to` of the shared `store` from another database, under the new
   * uid `uid` (see the top of this file). A fork this database was receiving before and never finished
   * is dropped, and leaves its store's family.
   */
  async beginReceivingFork(to: string, uid: string, store: string): Promise<void> {
    assertWorkspaceId(to);
    this.rows.assertAbsent(to);
    const dropped = this.forks.begin(uid, store);
    for (const fork of dropped) if (fork.store !== null) await this.families?.leave(fork.store, fork.uid);
  }

  receiveForkEntries(uid: string, entries: readonly ForkedEntry[]): void {
    this.forks.entries(uid, entries);
  }

  /** Inside the transaction that adopts a received fork: it must still be the one being received. */
  assertReceivingFork(uid: string): void {
    this.forks.assertPending(uid);
  }

  /** Makes the fork received under `uid` the workspace `to`, in one transaction with `alsoAdopt` (its history). */
  adoptFork(to: string, uid: string, workspace: ForkedWorkspace, alsoAdopt: () => void = () => {}): WorkspaceInfo {
    this.rows.forget(to);
    return this.db.transaction(() => {
      this.rows.assertAbsent(to);
      this.forks.finish(uid);
      this.forks.markShared(workspace.store);
      alsoAdopt();
      return this.rows.insertFork(to, uid, workspace);
    });
  }
}

/** The source's rows for a fork, read at once (no other call changes them meanwhile). */
function forkEntries(db: SqlDatabase, uid: string): ForkedEntry[] {
  return db.query<ForkedEntry>(
    'SELECT path, parent, type, blob, target, size, version FROM entries WHERE workspace = ? ORDER BY path',
    uid,
  );
}

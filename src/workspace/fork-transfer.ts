// A fork between two databases (the Cloudflare home, where each workspace's object has its own):
// the source reads a snapshot of its rows in one synchronous step; the receiving side takes them in
// batches under the fork's new uid, which no workspace row names until the last call adopts it, so
// a fork half sent is never seen, and the next fork to the same name clears what it left.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ManifestEntry } from './manifest.ts';

/** What a fork takes from its source's workspace row. */
export interface ForkedWorkspace {
  store: string;
  settings: string;
  version: number;
  files: number;
  bytes: number;
}

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

/** The source's rows for a fork, read at once (no other call changes them meanwhile). */
export function forkEntries(db: SqlDatabase, uid: string): ForkedEntry[] {
  return db.query<ForkedEntry>(
    'SELECT path, parent, type, blob, target, size, version FROM entries WHERE workspace = ? ORDER BY path',
    uid,
  );
}

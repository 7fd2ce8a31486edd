// The SQL schema of workspaces and their manifests, applied idempotently at start-up.
import type { SqlDatabase } from '../storage/sql-database.ts';

/*
 * Rows are keyed by the workspace's `uid`, a random id minted at creation, never by its
 * public name: a workspace deleted and created again under the same name starts empty,
 * even while the old incarnation's blobs are still being removed from the object store.
 * `store` names the object-store prefix (`ws/<store>/`) holding its contents and git objects:
 * its own uid (NULL in rows made before forks), or the store of the workspace it was forked
 * from, which a family of forks shares, content being addressed by hash.
 */
const statements = `
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  store TEXT,
  created_at TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL DEFAULT 0,
  files INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entries (
  workspace TEXT NOT NULL,
  path TEXT NOT NULL,
  parent TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('file', 'dir', 'symlink')),
  blob TEXT,
  target TEXT,
  size INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL,
  PRIMARY KEY (workspace, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_by_parent ON entries (workspace, parent, path);
`;

export function applyWorkspaceSchema(db: SqlDatabase): void {
  db.script(statements);
  // Databases made before forks have no store column: their workspaces' stores are their uids.
  try {
    db.query('SELECT store FROM workspaces LIMIT 0');
  } catch {
    db.script('ALTER TABLE workspaces ADD COLUMN store TEXT');
  }
}

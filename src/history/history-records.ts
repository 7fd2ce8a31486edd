// What history keeps in SQL beside the git directory: the checkpoint index and the blob id map.
import type { SqlDatabase } from '../storage/sql-database.ts';

/*
 * Rows are keyed by the workspace's uid, as the manifest's are. `git_files` holds the git
 * directory's small files (HEAD, config, refs); `git_blobs` maps the SHA-256 of content the
 * workspace stores to its git blob id, so a checkpoint hashes only content it has not seen;
 * `checkpoints` lists the commits made as checkpoints, in order, so listing reads no objects.
 */
const statements = `
CREATE TABLE IF NOT EXISTS git_files (
  workspace TEXT NOT NULL,
  path TEXT NOT NULL,
  content BLOB NOT NULL,
  PRIMARY KEY (workspace, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS git_blobs (
  workspace TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  oid TEXT NOT NULL,
  size INTEGER NOT NULL,
  PRIMARY KEY (workspace, sha256)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS git_blobs_by_oid ON git_blobs (workspace, oid);
CREATE TABLE IF NOT EXISTS checkpoints (
  workspace TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  message TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (workspace, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checkpoints_by_seq ON checkpoints (workspace, seq);
`;

/** A type alias, so it serves as the SQL row type too. */
export type CheckpointRow = {
  id: string;
  message: string;
  createdAt: string;
};

/** A workspace's history rows, as they travel to a fork in another database. */
export interface HistoryRows {
  gitFiles: { path: string; content: Uint8Array }[];
  gitBlobs: { sha256: string; oid: string; size: number }[];
  checkpoints: { seq: number; id: string; message: string; createdAt: string }[];
}

export class HistoryRecords {
  constructor(private readonly db: SqlDatabase) {
    db.script(statements);
  }

  /** The git blob id of content stored under this SHA-256, when a checkpoint or import has seen it. */
  blobOid(workspaceUid: string, sha256: string): string | undefined {
    return this.db.query<{ oid: string }>(
      'SELECT oid FROM git_blobs WHERE workspace = ? AND sha256 = ?',
      workspaceUid,
      sha256,
    )[0]?.oid;
  }

  /** The stored content behind a git blob id (the workspace's blob store holds it under `sha256`). */
  contentOf(workspaceUid: string, oid: string): { sha256: string; size: number } | undefined {
    return this.db.query<{ sha256: string; size: number }>(
      'SELECT sha256, size FROM git_blobs WHERE workspace = ? AND oid = ? LIMIT 1',
      workspaceUid,
      oid,
    )[0];
  }

  /** Records a pair once its git object exists, never before: a checkpoint trusts it without looking. */
  recordBlob(workspaceUid: string, sha256: string, oid: string, size: number): void {
    this.db.query(
      'INSERT INTO git_blobs (workspace, sha256, oid, size) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      workspaceUid,
      sha256,
      oid,
      size,
    );
  }

  addCheckpoint(workspaceUid: string, row: CheckpointRow): void {
    const seq =
      this.db.query<{ seq: number | null }>(
        'SELECT MAX(seq) AS seq FROM checkpoints WHERE workspace = ?',
        workspaceUid,
      )[0]?.seq ?? 0;
    this.db.query(
      'INSERT INTO checkpoints (workspace, seq, id, message, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      workspaceUid,
      seq + 1,
      row.id,
      row.message,
      row.createdAt,
    );
  }

  checkpoint(workspaceUid: string, id: string): CheckpointRow | undefined {
    return this.db.query<CheckpointRow>(
      'SELECT id, message, created_at AS createdAt FROM checkpoints WHERE workspace = ? AND id = ?',
      workspaceUid,
      id,
    )[0];
  }

  /** Newest first. */
  checkpoints(workspaceUid: string, limit: number): CheckpointRow[] {
    return this.db.query<CheckpointRow>(
      'SELECT id, message, created_at AS createdAt FROM checkpoints WHERE workspace = ? ORDER BY seq DESC LIMIT ?',
      workspaceUid,
      limit,
    );
  }

  /** Forgets a deleted workspace's history (its objects go with the workspace's object prefix). */
  /** The contents the workspaces' histories know by SHA-256: restores read them from the blob store. */
  *blobsOf(workspaceUids: readonly string[]): Iterable<string> {
    for (const uid of workspaceUids)
      for (const row of this.db.query<{ sha256: string }>('SELECT sha256 FROM git_blobs WHERE workspace = ?', uid))
        yield row.sha256;
  }

  /** A workspace's history rows as a fork in another database receives them. */
  rowsOf(workspaceUid: string): HistoryRows {
    return {
      gitFiles: this.db.query<{ path: string; content: Uint8Array }>(
        'SELECT path, content FROM git_files WHERE workspace = ?',
        workspaceUid,
      ),
      gitBlobs: this.db.query<{ sha256: string; oid: string; size: number }>(
        'SELECT sha256, oid, size FROM git_blobs WHERE workspace = ?',
        workspaceUid,
      ),
      checkpoints: this.db.query<{ seq: number; id: string; message: string; createdAt: string }>(
        'SELECT seq, id, message, created_at AS createdAt FROM checkpoints WHERE workspace = ?',
        workspaceUid,
      ),
    };
  }

  /** Records a fork's history rows received from its source's database. */
  addRows(workspaceUid: string, rows: HistoryRows): void {
    for (const file of rows.gitFiles)
      this.db.query(
        'INSERT INTO git_files (workspace, path, content) VALUES (?, ?, ?)',
        workspaceUid,
        file.path,
        file.content,
      );
    for (const blob of rows.gitBlobs)
      this.db.query(
        'INSERT INTO git_blobs (workspace, sha256, oid, size) VALUES (?, ?, ?, ?)',
        workspaceUid,
        blob.sha256,
        blob.oid,
        blob.size,
      );
    for (const checkpoint of rows.checkpoints)
      this.db.query(
        'INSERT INTO checkpoints (workspace, seq, id, message, created_at) VALUES (?, ?, ?, ?, ?)',
        workspaceUid,
        checkpoint.seq,
        checkpoint.id,
        checkpoint.message,
        checkpoint.createdAt,
      );
  }

  /** Gives a fork the history of the workspace it was forked from: its branch, checkpoints and blob ids. */
  copy(fromUid: string, toUid: string): void {
    this.db.query(
      'INSERT INTO git_files (workspace, path, content) SELECT ?, path, content FROM git_files WHERE workspace = ?',
      toUid,
      fromUid,
    );
    this.db.query(
      'INSERT INTO git_blobs (workspace, sha256, oid, size) SELECT ?, sha256, oid, size FROM git_blobs WHERE workspace = ?',
      toUid,
      fromUid,
    );
    this.db.query(
      'INSERT INTO checkpoints (workspace, seq, id, message, created_at) SELECT ?, seq, id, message, created_at FROM checkpoints WHERE workspace = ?',
      toUid,
      fromUid,
    );
  }

  forget(workspaceUid: string): void {
    for (const table of ['git_files', 'git_blobs', 'checkpoints'])
      this.db.query(`DELETE FROM ${table} WHERE workspace = ?`, workspaceUid);
  }
}

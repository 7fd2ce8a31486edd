// The SQL schema of process records, their output ring buffers, pending stdin and the job queue.
import type { SqlDatabase } from '../storage/sql-database.ts';

/*
 * `processes.seq` orders a workspace's processes (and the queue) by creation, which ISO
 * timestamps cannot do within one millisecond. env, conflicts and exec_result are JSON.
 * `stdin_closed` remembers an eof after its process_stdin row has been delivered and deleted.
 *
 * `process_output` holds each process's output as chunks of at most a few KiB keyed by the
 * character offset (UTF-16 units) they start at; a chunk ends where the next begins, the last
 * one at `processes.output_chars`. Rows stay small so an append rewrites one chunk at most,
 * and the ring drops whole chunks from the front.
 *
 * `jobs` has one row per process (its id is the process id, the idempotency key). Times in
 * jobs are epoch milliseconds. `lease_token` grows by one on every lease: the fencing token.
 * `finished_token` is the token whose finish report ended the job, so a replay is recognised.
 * `leased_key` is the API key that holds (or last held) the lease: only it may report on the job
 * or read the job's workspace, since tokens are small counters anyone could guess.
 */
const statements = `
CREATE TABLE IF NOT EXISTS processes (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  workspace TEXT NOT NULL,
  command TEXT NOT NULL,
  cwd TEXT NOT NULL,
  env TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('exec', 'start')),
  timeout_ms INTEGER,
  terminal TEXT,
  status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'exited', 'stopped', 'failed', 'lost')),
  pid INTEGER,
  exit_code INTEGER,
  timed_out INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  started_at TEXT,
  ended_at TEXT,
  error TEXT,
  conflicts TEXT NOT NULL DEFAULT '[]',
  output_chars INTEGER NOT NULL DEFAULT 0,
  exec_result TEXT,
  stop_requested_grace_ms INTEGER,
  stdin_closed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS processes_by_workspace ON processes (workspace, seq);
CREATE TABLE IF NOT EXISTS process_output (
  process_id TEXT NOT NULL,
  start_offset INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (process_id, start_offset)
);
CREATE TABLE IF NOT EXISTS process_stdin (
  process_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  data TEXT NOT NULL,
  eof INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (process_id, seq)
);
-- A runner's sync-back, by the id it gave it: a retried sync answers as the first one did.
CREATE TABLE IF NOT EXISTS process_syncs (
  process_id TEXT NOT NULL,
  sync_id TEXT NOT NULL,
  result TEXT NOT NULL,
  PRIMARY KEY (process_id, sync_id)
);
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('queued', 'leased', 'done')),
  lease_token INTEGER NOT NULL DEFAULT 0,
  leased_by TEXT,
  leased_key TEXT,
  lease_expires_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  finished_token INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state, lease_expires_at);
`;

export function applyProcessSchema(db: SqlDatabase): void {
  db.script(statements);
  // Added after the first release; a data dir from before gains them here.
  for (const column of ['jobs ADD COLUMN leased_key TEXT', 'processes ADD COLUMN terminal TEXT']) {
    try {
      db.script(`ALTER TABLE ${column}`);
    } catch (error) {
      if (!/duplicate column/i.test((error as Error).message)) throw error;
    }
  }
}

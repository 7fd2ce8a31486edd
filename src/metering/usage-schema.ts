// The SQL schema of usage records: one row per tool call.
import type { SqlDatabase } from '../storage/sql-database.ts';

/*
 * `outcome` is NULL while the call is open. `effect` is 1 once the call's effect committed (a restart closes
 * such a call `ok`). `call_key` names a record written inside its effect's transaction, so the settle that
 * follows updates it rather than writing a second. `process_open` marks a started process whose run time is
 * still to be added to `process_seconds`; `approval_id` an open call that waits for an approver.
 */
export function applyUsageSchema(db: SqlDatabase): void {
  db.script(`
    CREATE TABLE IF NOT EXISTS usage (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      key_id TEXT NOT NULL,
      workspace TEXT NOT NULL,
      tool TEXT NOT NULL,
      action TEXT,
      outcome TEXT,
      billable INTEGER NOT NULL,
      effect INTEGER NOT NULL DEFAULT 0,
      bytes_in INTEGER NOT NULL,
      bytes_out INTEGER NOT NULL DEFAULT 0,
      duration_ms INTEGER NOT NULL DEFAULT 0,
      process_id TEXT,
      process_open INTEGER NOT NULL DEFAULT 0,
      process_seconds REAL NOT NULL DEFAULT 0,
      approval_id TEXT,
      started_at INTEGER NOT NULL,
      call_key TEXT
    );
    CREATE UNIQUE INDEX IF NOT EXISTS usage_call_key ON usage (call_key) WHERE call_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS usage_key_time ON usage (key_id, started_at);
    CREATE INDEX IF NOT EXISTS usage_time ON usage (started_at);
    CREATE INDEX IF NOT EXISTS usage_open_process ON usage (process_id) WHERE process_open = 1;
  `);
}

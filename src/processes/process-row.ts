// A `processes` row as SQL returns it, and the ProcessRecord it stands for.
import type { SqlDatabase, SqlValue } from '../storage/sql-database.ts';
import { FINAL_STATUSES, type ProcessRecord, type ProcessStatus } from './process-record.ts';

export type ProcessRow = {
  seq: number;
  id: string;
  workspace: string;
  command: string;
  cwd: string;
  env: string;
  mode: 'exec' | 'start';
  timeout_ms: number | null;
  /** JSON of the terminal size, or null. */
  terminal: string | null;
  status: ProcessStatus;
  pid: number | null;
  exit_code: number | null;
  timed_out: number;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  error: string | null;
  conflicts: string;
  output_chars: number;
  exec_result: string | null;
  stop_requested_grace_ms: number | null;
  stdin_closed: number;
};

export function recordOf(row: ProcessRow): ProcessRecord {
  return {
    id: row.id,
    workspace: row.workspace,
    command: row.command,
    cwd: row.cwd,
    env: JSON.parse(row.env) as Record<string, string>,
    mode: row.mode,
    timeoutMs: row.timeout_ms,
    terminal:
      row.terminal === null || row.terminal === undefined
        ? null
        : (JSON.parse(row.terminal) as ProcessRecord['terminal']),
    status: row.status,
    pid: row.pid,
    exitCode: row.exit_code,
    timedOut: row.timed_out !== 0,
    createdAt: row.created_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    error: row.error,
    conflicts: JSON.parse(row.conflicts) as string[],
    outputChars: row.output_chars,
  };
}

export function selectProcess(db: SqlDatabase, id: string): ProcessRow | undefined {
  return db.query<ProcessRow>('SELECT * FROM processes WHERE id = ?', id)[0];
}

/** Runs an UPDATE … RETURNING * of one existing process and answers its new record. */
export function updateProcess(db: SqlDatabase, sql: string, ...params: SqlValue[]): ProcessRecord {
  const [row] = db.query<ProcessRow>(sql, ...params);
  if (row === undefined) throw new Error(`no process row matched: ${sql}`);
  return recordOf(row);
}

export function isFinal(row: ProcessRow): boolean {
  return FINAL_STATUSES.includes(row.status);
}

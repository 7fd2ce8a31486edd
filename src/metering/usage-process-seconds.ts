// The run time of started processes on the usage records of the calls that started them: which
// are still open, and their seconds counted as they run and when they end.
import type { SqlDatabase } from '../storage/sql-database.ts';

/** Process seconds newly counted on a call's record. */
export interface ProcessSeconds {
  keyId: string;
  startedAt: number;
  /** Seconds added by this count. */
  added: number;
}

/** Started processes whose run time is still to be counted. */
export function openProcesses(db: SqlDatabase): { workspace: string; processId: string }[] {
  return db
    .query<{ workspace: string; process_id: string }>('SELECT workspace, process_id FROM usage WHERE process_open = 1')
    .map((row) => ({
      workspace: row.workspace,
      processId: row.process_id,
    }));
}

/** The workspace of a started process whose run time is still to be counted. */
export function openProcessWorkspace(db: SqlDatabase, processId: string): string | undefined {
  return db.query<{ workspace: string }>(
    'SELECT workspace FROM usage WHERE process_id = ? AND process_open = 1',
    processId,
  )[0]?.workspace;
}

/**
 * Sets a process's run time so far (`open`: it still runs) on the call that started it; answers
 * that call with the seconds added since it was last counted (none when already counted).
 */
export function countProcessSeconds(
  db: SqlDatabase,
  processId: string,
  seconds: number,
  open: boolean,
): ProcessSeconds[] {
  return db.transaction(() =>
    db
      .query<{ key_id: string; started_at: number; process_seconds: number }>(
        'SELECT key_id, started_at, process_seconds FROM usage WHERE process_id = ? AND process_open = 1',
        processId,
      )
      .map((row) => {
        // A count never goes back: an accrual ahead of a clock step keeps what it counted.
        const total = Math.max(seconds, row.process_seconds);
        db.query(
          'UPDATE usage SET process_seconds = ?, process_open = ? WHERE process_id = ? AND process_open = 1',
          total,
          open ? 1 : 0,
          processId,
        );
        return { keyId: row.key_id, startedAt: row.started_at, added: total - row.process_seconds };
      }),
  );
}

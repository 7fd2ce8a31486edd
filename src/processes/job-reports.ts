// A runner's reports on a job it leased (started, output batches, renewals, the end), each fenced
// by the lease's token and the key holding it, and the answers of its sync-backs, kept for retries.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { JobQueue } from './job-queue.ts';
import type { ProcessEvents } from './process-events.ts';
import type { ProcessLog } from './process-log.ts';
import type { ProcessRecord } from './process-record.ts';
import { recordOf, selectProcess, updateProcess, type ProcessRow } from './process-row.ts';
import type { FinishReport } from '../contract/runner-protocol.ts';
import { FINISH_STATUSES, type ExecResult, type LeaseFence } from './runner-reports.ts';

export interface JobReportsParts {
  db: SqlDatabase;
  jobs: JobQueue;
  log: ProcessLog;
  events: ProcessEvents;
  now: () => number;
  leaseMs: number;
  /** Wakes a waiting lease request when a job may go now: an ended job frees its workspace's slot. */
  wakeRunners: () => void;
}

export class JobReports {
  readonly #db: SqlDatabase;
  readonly #jobs: JobQueue;
  readonly #log: ProcessLog;
  readonly #events: ProcessEvents;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #wakeRunners: () => void;

  constructor(parts: JobReportsParts) {
    this.#db = parts.db;
    this.#jobs = parts.jobs;
    this.#log = parts.log;
    this.#events = parts.events;
    this.#now = parts.now;
    this.#leaseMs = parts.leaseMs;
    this.#wakeRunners = parts.wakeRunners;
  }

  started(id: string, fence: LeaseFence, pid: number): ProcessRecord {
    let changed = false;
    const record = this.#db.transaction(() => {
      this.#fenceAndRenew(id, fence);
      const row = this.#row(id);
      if (row.status !== 'queued') return recordOf(row);
      changed = true;
      return updateProcess(
        this.#db,
        "UPDATE processes SET status = 'running', pid = ?, started_at = ? WHERE id = ? RETURNING *",
        pid,
        this.#iso(),
        id,
      );
    });
    if (changed) this.#events.changed([id]);
    return record;
  }

  /**
   * Appends a batch at `offset`. `skipped` characters before it were produced but not sent: a
   * runner far behind sends only the tail it knows the ring keeps, so it is allowed only with a
   * batch of at least the ring's size (everything older would be dropped anyway).
   */
  appendOutput(id: string, fence: LeaseFence, data: string, offset?: number, skipped = 0): number {
    if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
      throw new ToolError('invalid_argument', `an output offset must be a whole number of 0 or more, not ${offset}.`, {
        processId: id,
      });
    }
    if (
      !(Number.isSafeInteger(skipped) && skipped >= 0) ||
      (skipped > 0 && (offset === undefined || data.length < this.#log.keepsChars))
    ) {
      throw new ToolError(
        'invalid_argument',
        `skipped output needs an offset and a batch of at least ${this.#log.keepsChars} characters.`,
        { processId: id },
      );
    }
    let changed = false;
    const end = this.#db.transaction(() => {
      this.#fenceAndRenew(id, fence);
      const held = this.#row(id).output_chars;
      if (offset !== undefined && offset > held) {
        throw new ToolError(
          'conflict',
          `output from offset ${held} of process ${id} never arrived; resend from offset ${held}.`,
          { processId: id, end: held },
        );
      }
      if (skipped > 0) {
        // A resent batch with a skip was applied whole or not at all.
        if (held >= offset! + skipped + data.length) return held;
        if (held !== offset)
          throw new ToolError(
            'conflict',
            `output of process ${id} is at ${held}, not ${offset}; resend from offset ${held}.`,
            { processId: id, end: held },
          );
      }
      // What the log already holds of a resent batch is not appended again.
      const fresh = offset === undefined || skipped > 0 ? data : data.slice(Math.min(held - offset, data.length));
      if (fresh.length === 0) return held;
      changed = true;
      const newEnd = this.#log.append(id, held, fresh, skipped);
      this.#db.query('UPDATE processes SET output_chars = ? WHERE id = ?', newEnd, id);
      return newEnd;
    });
    if (changed) this.#events.changed([id]);
    return end;
  }

  /** Renews the lease of a job whose token still holds it (and only that). */
  renew(id: string, fence: LeaseFence): void {
    this.#db.transaction(() => this.#fenceAndRenew(id, fence));
  }

  finish(id: string, fence: LeaseFence, result: FinishReport): ProcessRecord {
    if (!FINISH_STATUSES.includes(result.status)) {
      throw new ToolError(
        'invalid_argument',
        `a finish status must be exited, stopped or failed, not ${String(result.status)}.`,
        { processId: id },
      );
    }
    let changed = false;
    const record = this.#db.transaction(() => {
      if (this.#jobs.finishedWith(id, fence)) return recordOf(this.#row(id));
      this.#jobs.fence(id, fence);
      const row = this.#row(id);
      // docs/api.md: a process ended by stop is `stopped`, however it exits.
      const status = row.stop_requested_grace_ms !== null ? 'stopped' : result.status;
      const execResult =
        result.stdout === undefined && result.stderr === undefined
          ? row.exec_result
          : JSON.stringify({
              stdout: result.stdout ?? '',
              stderr: result.stderr ?? '',
              truncated: result.truncated ?? false,
            } satisfies ExecResult);
      this.#jobs.complete(id, fence.token);
      changed = true;
      return updateProcess(
        this.#db,
        `UPDATE processes SET status = ?, exit_code = ?, timed_out = ?, ended_at = ?, error = ?, conflicts = ?, exec_result = ?
         WHERE id = ? RETURNING *`,
        status,
        result.exitCode,
        result.timedOut === true ? 1 : 0,
        this.#iso(),
        result.error ?? null,
        JSON.stringify(result.conflicts ?? []),
        execResult,
        id,
      );
    });
    if (changed) {
      this.#events.changed([id]);
      // Its slot is free: a job of its workspace held back by the cap may go now.
      this.#wakeRunners();
    }
    return record;
  }

  /** What a sync-back with this id answered, when one was recorded (its retry must not commit again). */
  syncResult<T>(id: string, syncId: string): T | undefined {
    const row = this.#db.query<{ result: string }>(
      'SELECT result FROM process_syncs WHERE process_id = ? AND sync_id = ?',
      id,
      syncId,
    )[0];
    return row === undefined ? undefined : (JSON.parse(row.result) as T);
  }

  /** Records a sync-back's answer; run inside the transaction that commits it. */
  recordSync(id: string, syncId: string, result: unknown): void {
    this.#db.query(
      'INSERT OR IGNORE INTO process_syncs (process_id, sync_id, result) VALUES (?, ?, ?)',
      id,
      syncId,
      JSON.stringify(result),
    );
  }

  /** A fenced job's process row exists: deleting a workspace deletes the job with it. */
  #row(id: string): ProcessRow {
    const row = selectProcess(this.#db, id);
    if (row === undefined) throw new Error(`process ${id} has a job but no record`);
    return row;
  }

  #fenceAndRenew(id: string, fence: LeaseFence): void {
    this.#jobs.fence(id, fence);
    this.#jobs.renew(id, this.#now() + this.#leaseMs);
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

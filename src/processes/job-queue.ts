// The job queue on SQL: one job per process id, leased with an expiry and a fencing token.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ProcessStatus } from './process-record.ts';

/** A leased job whose lease ran out, with what the sweeper needs to decide its fate. */
export interface ExpiredLease {
  id: string;
  attempts: number;
  leasedBy: string | null;
  status: ProcessStatus;
}

/**
 * Every method runs inside the caller's transaction, which also changes the process record:
 * the record is the truth, a job only says who may report on it.
 */
export class JobQueue {
  constructor(private readonly db: SqlDatabase) {}

  /** Enqueues the job of a process; enqueueing the same id again changes nothing. */
  enqueue(id: string, now: number): void {
    this.db.query("INSERT INTO jobs (id, state, created_at) VALUES (?, 'queued', ?) ON CONFLICT (id) DO NOTHING", id, now);
  }

  /** The oldest queued job whose process is still queued. */
  next(): string | undefined {
    const [row] = this.db.query<{ id: string }>(
      `SELECT jobs.id AS id FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE jobs.state = 'queued' AND processes.status = 'queued' ORDER BY processes.seq LIMIT 1`,
    );
    return row?.id;
  }

  /** Queued jobs whose process is still queued, oldest first, with how often each was leased before. */
  queued(): { id: string; attempts: number }[] {
    return this.db.query<{ id: string; attempts: number }>(
      `SELECT jobs.id AS id, jobs.attempts AS attempts FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE jobs.state = 'queued' AND processes.status = 'queued' ORDER BY processes.seq`,
    );
  }

  /** Whether a job is queued and its process still waits for it. */
  isQueued(id: string): boolean {
    const [row] = this.db.query<{ queued: number }>(
      `SELECT COUNT(*) AS queued FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE jobs.id = ? AND jobs.state = 'queued' AND processes.status = 'queued'`,
      id,
    );
    return (row?.queued ?? 0) > 0;
  }

  /** Leases a queued job to `runnerId` until `expiresAt` and returns the new fencing token. */
  lease(id: string, runnerId: string, expiresAt: number): number {
    const [row] = this.db.query<{ lease_token: number }>(
      `UPDATE jobs SET state = 'leased', lease_token = lease_token + 1, leased_by = ?, lease_expires_at = ?,
         attempts = attempts + 1
       WHERE id = ? AND state = 'queued' RETURNING lease_token`,
      runnerId,
      expiresAt,
      id,
    );
    if (row === undefined) throw new Error(`job ${id} is not queued`);
    return row.lease_token;
  }

  /** Refuses `token` unless it is the current lease of a leased job: the fence of every report. */
  fence(id: string, token: number): void {
    const [row] = this.db.query<{ state: string; lease_token: number }>('SELECT state, lease_token FROM jobs WHERE id = ?', id);
    if (row === undefined || row.state !== 'leased' || row.lease_token !== token) {
      const why = row === undefined ? 'the job no longer exists' : row.state === 'leased' ? `it is leased under token ${row.lease_token} now` : `the job is ${row.state}`;
      throw new ToolError('conflict', `the lease token is stale: token ${token} of process ${id} no longer holds its job (${why}), so abandon this job.`, {
        processId: id,
      });
    }
  }

  /** Extends the lease of a fenced job to `expiresAt`. */
  renew(id: string, expiresAt: number): void {
    this.db.query('UPDATE jobs SET lease_expires_at = ? WHERE id = ?', expiresAt, id);
  }

  /** Ends the job; `finishedToken` is the lease whose finish report ended it (null when something else did). */
  complete(id: string, finishedToken: number | null): void {
    this.db.query("UPDATE jobs SET state = 'done', lease_expires_at = NULL, finished_token = ? WHERE id = ?", finishedToken, id);
  }

  /** Whether `token` already reported this job's finish: a replay of an answered report. */
  finishedWith(id: string, token: number): boolean {
    const [row] = this.db.query<{ finished: number }>(
      "SELECT COUNT(*) AS finished FROM jobs WHERE id = ? AND state = 'done' AND finished_token = ?",
      id,
      token,
    );
    return (row?.finished ?? 0) > 0;
  }

  /** Puts a job whose lease ran out before its process started back in the queue for another runner. */
  requeue(id: string): void {
    this.db.query("UPDATE jobs SET state = 'queued', leased_by = NULL, lease_expires_at = NULL WHERE id = ?", id);
  }

  /** The leased jobs whose lease expired before `now`, oldest process first. */
  expired(now: number): ExpiredLease[] {
    return this.db
      .query<{ id: string; attempts: number; leased_by: string | null; status: ProcessStatus }>(
        `SELECT jobs.id AS id, jobs.attempts AS attempts, jobs.leased_by AS leased_by, processes.status AS status
         FROM jobs JOIN processes ON processes.id = jobs.id
         WHERE jobs.state = 'leased' AND jobs.lease_expires_at < ? ORDER BY processes.seq`,
        now,
      )
      .map((row) => ({ id: row.id, attempts: row.attempts, leasedBy: row.leased_by, status: row.status }));
  }

  /** Removes the jobs of every process of a workspace. */
  deleteWorkspace(workspace: string): void {
    this.db.query('DELETE FROM jobs WHERE id IN (SELECT id FROM processes WHERE workspace = ?)', workspace);
  }
}

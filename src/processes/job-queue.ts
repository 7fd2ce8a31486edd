// The job queue on SQL: one job per process id, leased with an expiry and a fencing token.
import { ToolError } from '../core/errors.ts';
import { scopeFilter, type WorkspaceScope } from '../core/workspace-scope.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { JobCandidate } from './process-events.ts';
import type { ProcessStatus } from './process-record.ts';
import type { LeaseFence } from './runner-reports.ts';

/** How a runner's next job is chosen: the per-workspace cap, whether it takes exec jobs only, and when each workspace was last served. */
export interface JobPick {
  maxRunning: number;
  execOnly?: boolean;
  /** A number that grows with each lease of the workspace's jobs (0 for one never served). */
  lastServed: (workspace: string) => number;
}

/** Queued jobs whose process still waits for them. */
const WAITING = "jobs.state = 'queued' AND processes.status = 'queued'";

/** A leased job whose lease ran out, with what the sweeper needs to decide its fate. */
export interface ExpiredLease {
  id: string;
  workspace: string;
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
    this.db.query(
      "INSERT INTO jobs (id, state, created_at) VALUES (?, 'queued', ?) ON CONFLICT (id) DO NOTHING",
      id,
      now,
    );
  }

  /**
   * The job a runner of `scope` takes next, fairly: of the workspaces in scope with a waiting job
   * and fewer than `pick.maxRunning` leased ones, the one served least recently (by
   * `pick.lastServed`), and its oldest waiting job; only `exec` jobs when `pick.execOnly`.
   */
  next(scope: WorkspaceScope, pick: JobPick): string | undefined {
    const filter = scopeFilter(scope);
    const heads = this.db.query<{ workspace: string; seq: number }>(
      `SELECT processes.workspace AS workspace, MIN(processes.seq) AS seq FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE ${WAITING} ${pick.execOnly ? "AND processes.mode = 'exec'" : ''}
         ${filter === undefined ? '' : 'AND processes.workspace IN (SELECT value FROM json_each(?))'}
       GROUP BY processes.workspace`,
      ...(filter === undefined ? [] : [filter]),
    );
    if (heads.length === 0) return undefined;
    const running = new Map(
      this.db
        .query<{ workspace: string; leased: number }>(
          `SELECT processes.workspace AS workspace, COUNT(*) AS leased FROM jobs JOIN processes ON processes.id = jobs.id
           WHERE jobs.state = 'leased' GROUP BY processes.workspace`,
        )
        .map((row) => [row.workspace, row.leased]),
    );
    let chosen: { workspace: string; seq: number; served: number } | undefined;
    for (const head of heads) {
      if ((running.get(head.workspace) ?? 0) >= pick.maxRunning) continue;
      const served = pick.lastServed(head.workspace);
      if (!chosen || served < chosen.served || (served === chosen.served && head.seq < chosen.seq))
        chosen = { ...head, served };
    }
    return chosen && this.db.query<{ id: string }>('SELECT id FROM processes WHERE seq = ?', chosen.seq)[0]?.id;
  }

  /** The kinds of waiting jobs a runner may take now: of workspaces under `maxRunning` leased jobs, by mode. */
  leasable(maxRunning: number): JobCandidate[] {
    return this.db
      .query<{ workspace: string; exec: number }>(
        `SELECT DISTINCT processes.workspace AS workspace, processes.mode = 'exec' AS exec FROM jobs JOIN processes ON processes.id = jobs.id
         WHERE ${WAITING} AND (SELECT COUNT(*) FROM jobs AS held JOIN processes AS owner ON owner.id = held.id
                               WHERE held.state = 'leased' AND owner.workspace = processes.workspace) < ?`,
        maxRunning,
      )
      .map((row) => ({ workspace: row.workspace, exec: row.exec === 1 }));
  }

  /** Whether the workspace runs fewer than `maxRunning` leased jobs, so one more of its jobs may start. */
  hasRoom(workspace: string, maxRunning: number): boolean {
    const [row] = this.db.query<{ leased: number }>(
      `SELECT COUNT(*) AS leased FROM jobs JOIN processes ON processes.id = jobs.id WHERE jobs.state = 'leased' AND processes.workspace = ?`,
      workspace,
    );
    return (row?.leased ?? 0) < maxRunning;
  }

  /** Queued jobs whose process is still queued, oldest first, with how often each was leased before. */
  queued(): { id: string; attempts: number }[] {
    return this.db.query<{ id: string; attempts: number }>(
      `SELECT jobs.id AS id, jobs.attempts AS attempts FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE ${WAITING} ORDER BY processes.seq`,
    );
  }

  /** Whether a job is queued and its process still waits for it. */
  isQueued(id: string): boolean {
    const [row] = this.db.query<{ queued: number }>(
      `SELECT COUNT(*) AS queued FROM jobs JOIN processes ON processes.id = jobs.id
       WHERE jobs.id = ? AND ${WAITING}`,
      id,
    );
    return (row?.queued ?? 0) > 0;
  }

  /** Leases a queued job to `runnerId` (with the key `keyId`) until `expiresAt` and returns the new fencing token. */
  lease(id: string, runnerId: string, keyId: string, expiresAt: number): number {
    const [row] = this.db.query<{ lease_token: number }>(
      `UPDATE jobs SET state = 'leased', lease_token = lease_token + 1, leased_by = ?, leased_key = ?, lease_expires_at = ?,
         attempts = attempts + 1
       WHERE id = ? AND state = 'queued' RETURNING lease_token`,
      runnerId,
      keyId,
      expiresAt,
      id,
    );
    if (row === undefined) throw new Error(`job ${id} is not queued`);
    return row.lease_token;
  }

  /**
   * The fence of every report: refuses a token that is not the current lease of a leased job
   * (`conflict`, so its runner abandons the job), and a current token presented by any key but
   * the one holding the lease (`forbidden`).
   */
  fence(id: string, fence: LeaseFence): void {
    const [row] = this.db.query<{ state: string; lease_token: number; leased_key: string | null }>(
      'SELECT state, lease_token, leased_key FROM jobs WHERE id = ?',
      id,
    );
    const { token } = fence;
    if (row === undefined || row.state !== 'leased' || row.lease_token !== token) {
      const why =
        row === undefined
          ? 'the job no longer exists'
          : row.state === 'leased'
            ? 'a newer lease holds it now'
            : `the job is ${row.state}`;
      throw new ToolError(
        'conflict',
        `the lease token is stale: token ${token} of process ${id} no longer holds its job (${why}), so abandon this job.`,
        {
          processId: id,
        },
      );
    }
    if (row.leased_key !== fence.keyId) {
      throw new ToolError(
        'forbidden',
        `This key does not hold the lease of process ${id}; only the runner key that leased a job may report on it.`,
        { processId: id },
      );
    }
  }

  /** Whether `keyId` holds a lease, unexpired at `now`, on a job of `workspace`: what reading the workspace needs. */
  holdsLeaseIn(workspace: string, keyId: string, now: number): boolean {
    return (
      this.db.query<{ held: number }>(
        `SELECT 1 AS held FROM jobs JOIN processes ON processes.id = jobs.id
         WHERE processes.workspace = ? AND jobs.state = 'leased' AND jobs.leased_key = ? AND jobs.lease_expires_at >= ? LIMIT 1`,
        workspace,
        keyId,
        now,
      ).length > 0
    );
  }

  /** Extends the lease of a fenced job to `expiresAt`. */
  renew(id: string, expiresAt: number): void {
    this.db.query('UPDATE jobs SET lease_expires_at = ? WHERE id = ?', expiresAt, id);
  }

  /** Ends the job; `finishedToken` is the lease whose finish report ended it (null when something else did). */
  complete(id: string, finishedToken: number | null): void {
    this.db.query(
      "UPDATE jobs SET state = 'done', lease_expires_at = NULL, finished_token = ? WHERE id = ?",
      finishedToken,
      id,
    );
  }

  /** Whether this lease already reported the job's finish: a replay of an answered report. */
  finishedWith(id: string, fence: LeaseFence): boolean {
    const [row] = this.db.query<{ finished: number }>(
      "SELECT COUNT(*) AS finished FROM jobs WHERE id = ? AND state = 'done' AND finished_token = ? AND leased_key = ?",
      id,
      fence.token,
      fence.keyId,
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
      .query<{ id: string; workspace: string; attempts: number; leased_by: string | null; status: ProcessStatus }>(
        `SELECT jobs.id AS id, processes.workspace AS workspace, jobs.attempts AS attempts, jobs.leased_by AS leased_by, processes.status AS status
         FROM jobs JOIN processes ON processes.id = jobs.id
         WHERE jobs.state = 'leased' AND jobs.lease_expires_at < ? ORDER BY processes.seq`,
        now,
      )
      .map((row) => ({
        id: row.id,
        workspace: row.workspace,
        attempts: row.attempts,
        leasedBy: row.leased_by,
        status: row.status,
      }));
  }

  /** Removes the jobs of every process of a workspace. */
  deleteWorkspace(workspace: string): void {
    this.db.query('DELETE FROM jobs WHERE id IN (SELECT id FROM processes WHERE workspace = ?)', workspace);
  }
}

// The runner side of the process store: leases, and reports fenced by the lease token.
import { ToolError } from '../core/errors.ts';
import { scopeCovers } from '../core/workspace-scope.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { JobQueue } from './job-queue.ts';
import type { ProcessEvents } from './process-events.ts';
import type { ProcessLog } from './process-log.ts';
import type { ProcessRecord } from './process-record.ts';
import { recordOf, selectProcess, updateProcess, type ProcessRow } from './process-row.ts';
import type { FinishReport } from '../contract/runner-protocol.ts';
import {
  FINISH_STATUSES,
  type ExecResult,
  type JobLease,
  type LeaseFence,
  type LeaseHolder,
} from './runner-reports.ts';

/** Leases of a job that no runner started before the job fails: a command that kills its runners stops there. */
export const MAX_LEASE_ATTEMPTS = 3;

export interface RunnerSideParts {
  db: SqlDatabase;
  jobs: JobQueue;
  log: ProcessLog;
  events: ProcessEvents;
  now: () => number;
  leaseMs: number;
  /** Processes of one workspace that run at once; more wait queued. */
  maxRunningPerWorkspace: number;
}

/** What a lease asks for beyond the holder: only exec jobs (a runner's last free slot). */
export interface LeaseWish {
  execOnly?: boolean;
}

export class RunnerSide {
  readonly #db: SqlDatabase;
  readonly #jobs: JobQueue;
  readonly #log: ProcessLog;
  readonly #events: ProcessEvents;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #maxRunning: number;
  /** When each workspace's job was last leased (a rising turn number): runners take workspaces in turn. */
  readonly #served = new Map<string, number>();
  #turn = 0;

  constructor(parts: RunnerSideParts) {
    this.#db = parts.db;
    this.#jobs = parts.jobs;
    this.#log = parts.log;
    this.#events = parts.events;
    this.#now = parts.now;
    this.#leaseMs = parts.leaseMs;
    this.#maxRunning = parts.maxRunningPerWorkspace;
  }

  lease(runnerId: string, holder: LeaseHolder, wish: LeaseWish = {}): JobLease | undefined {
    return this.#db.transaction(() => {
      const id = this.#next(holder, wish);
      return id === undefined ? undefined : this.#lease(id, runnerId, holder);
    });
  }

  /** Whether a lease of this holder would find a job now. */
  hasJobFor(holder: LeaseHolder, wish: LeaseWish = {}): boolean {
    return this.#next(holder, wish) !== undefined;
  }

  /**
   * Leases one named job: `gone` when it no longer waits or is outside the holder's scope, `later`
   * when it waits but may not run now (its workspace runs its most processes, or it is a start and
   * the runner asked for an exec).
   */
  leaseJob(id: string, runnerId: string, holder: LeaseHolder, wish: LeaseWish = {}): JobLease | 'gone' | 'later' {
    return this.#db.transaction(() => {
      const row = selectProcess(this.#db, id);
      if (row === undefined || !scopeCovers(holder.workspaces, row.workspace) || !this.#jobs.isQueued(id))
        return 'gone';
      if ((wish.execOnly && row.mode !== 'exec') || !this.#jobs.hasRoom(row.workspace, this.#maxRunning))
        return 'later';
      return this.#lease(id, runnerId, holder);
    });
  }

  /** Wakes a waiting lease request when a job it may take waits: after a job was queued, ended, or passed on. */
  wakeForWaitingJobs(): void {
    const jobs = this.#jobs.leasable(this.#maxRunning);
    if (jobs.length > 0) this.#events.wakeJobWaiter(jobs);
  }

  /** Whether the key holds a live lease on a job of the workspace: reading its manifest and blobs needs one. */
  assertLeaseIn(workspace: string, keyId: string): void {
    if (!this.#jobs.holdsLeaseIn(workspace, keyId, this.#now())) {
      throw new ToolError(
        'forbidden',
        `This runner key holds no live lease on a job of workspace ${workspace}; a runner reads a workspace only while it runs one of its jobs.`,
        { workspace },
      );
    }
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
      this.wakeForWaitingJobs();
    }
    return record;
  }

  sweep(): string[] {
    const lost: string[] = [];
    const failed: string[] = [];
    let requeued = false;
    this.#db.transaction(() => {
      const endedAt = this.#iso();
      for (const lease of this.#jobs.expired(this.#now())) {
        if (lease.status === 'queued' && lease.attempts < MAX_LEASE_ATTEMPTS) {
          this.#jobs.requeue(lease.id);
          requeued = true;
          continue;
        }
        this.#jobs.complete(lease.id, null);
        if (lease.status === 'running') {
          const error = `its runner ${lease.leasedBy ?? 'unknown'} stopped renewing its lease, so how it ended is unknown`;
          this.#db.query(
            "UPDATE processes SET status = 'lost', ended_at = ?, error = ? WHERE id = ?",
            endedAt,
            error,
            lease.id,
          );
          lost.push(lease.id);
        } else if (lease.status === 'queued') {
          const error = `no runner started it in ${lease.attempts} leases`;
          this.#db.query(
            "UPDATE processes SET status = 'failed', ended_at = ?, error = ? WHERE id = ?",
            endedAt,
            error,
            lease.id,
          );
          failed.push(lease.id);
        }
      }
    });
    this.#events.changed([...lost, ...failed]);
    // Requeued jobs, and slots that lost and failed jobs freed, may let a waiting runner take one.
    if (requeued) this.#events.queued();
    if (requeued || lost.length > 0 || failed.length > 0) this.wakeForWaitingJobs();
    return lost;
  }

  /** A fenced job's process row exists: deleting a workspace deletes the job with it. */
  #row(id: string): ProcessRow {
    const row = selectProcess(this.#db, id);
    if (row === undefined) throw new Error(`process ${id} has a job but no record`);
    return row;
  }

  #next(holder: LeaseHolder, wish: LeaseWish): string | undefined {
    return this.#jobs.next(holder.workspaces, {
      maxRunning: this.#maxRunning,
      execOnly: wish.execOnly,
      lastServed: (workspace) => this.#served.get(workspace) ?? 0,
    });
  }

  #lease(id: string, runnerId: string, holder: LeaseHolder): JobLease {
    const token = this.#jobs.lease(id, runnerId, holder.keyId, this.#now() + this.#leaseMs);
    const record = recordOf(this.#row(id));
    this.#served.set(record.workspace, ++this.#turn);
    return { processId: id, token, leaseMs: this.#leaseMs, record };
  }

  #fenceAndRenew(id: string, fence: LeaseFence): void {
    this.#jobs.fence(id, fence);
    this.#jobs.renew(id, this.#now() + this.#leaseMs);
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

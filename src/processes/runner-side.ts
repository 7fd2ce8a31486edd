// The runner side of the process store: jobs leased to runners in turn, and leases that expired settled.
import { ToolError } from '../core/errors.ts';
import { scopeCovers } from '../core/workspace-scope.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { JobQueue } from './job-queue.ts';
import type { ProcessEvents } from './process-events.ts';
import { recordOf, selectProcess, type ProcessRow } from './process-row.ts';
import type { JobLease, LeaseHolder } from './runner-reports.ts';

/** Leases of a job that no runner started before the job fails: a command that kills its runners stops there. */
export const MAX_LEASE_ATTEMPTS = 3;

export interface RunnerSideParts {
  db: SqlDatabase;
  jobs: JobQueue;
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

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

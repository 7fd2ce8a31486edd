// The process store: bash process records, their logs and stdin, and the job queue feeding runners.
import type { SqlDatabase } from '../storage/sql-database.ts';
import { JobQueue } from './job-queue.ts';
import { ProcessEvents, waitFor } from './process-events.ts';
import { AgentSide } from './agent-side.ts';
import { ProcessLog } from './process-log.ts';
import { FINAL_STATUSES, type ProcessRecord, type ProcessRequest } from './process-record.ts';
import { isFinal, recordOf, selectProcess } from './process-row.ts';
import type { ControlReply, FinishReport } from '../contract/runner-protocol.ts';
import type { ExecResult, JobLease, LeaseFence, LeaseHolder } from './runner-reports.ts';
import { RunnerControl, type ControlRequest } from './runner-control.ts';
import { JobReports } from './job-reports.ts';
import { RunnerSide, type LeaseWish } from './runner-side.ts';
import { applyProcessSchema } from './schema.ts';
import type { Log } from '../core/log.ts';
import { readSetting } from '../contract/settings.ts';
import type { LogPage } from '../contract/process-snapshot.ts';

// Defaults for a store made without settings (tests, tools): the settings table's.
export const DEFAULT_MAX_OUTPUT_CHARS = readSetting({}, 'TOOLGATE_MAX_PROCESS_OUTPUT_CHARS', 'node');
export const DEFAULT_LEASE_MS = readSetting({}, 'TOOLGATE_LEASE_MS', 'node');
export const DEFAULT_LOST_AFTER_MS = 30_000;
export const DEFAULT_LOGS_LIMIT = 65_536;
/** Processes of one workspace that run at once (TOOLGATE_WORKSPACE_MAX_PROCESSES); more wait queued. */
export const DEFAULT_MAX_RUNNING_PER_WORKSPACE = readSetting({}, 'TOOLGATE_WORKSPACE_MAX_PROCESSES', 'node');
const DEFAULT_CHUNK_CHARS = 16_384;

export interface ProcessStoreOptions {
  maxOutputChars?: number;
  leaseMs?: number;
  /** The sweeper's period: a vanished runner's job is lost within leaseMs + this. */
  lostAfterMs?: number;
  /** Processes of one workspace that run at once; more wait queued (default 4). */
  maxRunningPerWorkspace?: number;
  /** Characters per stored log chunk (tests make it small to exercise the ring). */
  chunkChars?: number;
  /** Epoch milliseconds. */
  now?: () => number;
  /** Where failures no caller sees are reported (a change listener that threw). */
  log?: Log;
}

export type NewProcess = ProcessRequest;

export type { LogPage };

export class ProcessStore {
  readonly leaseMs: number;
  /** The latest characters of output each process keeps (runners far behind send only these). */
  readonly maxOutputChars: number;
  /** How often the composition root must call sweep() to keep the lease + 30 s promise. */
  readonly sweepIntervalMs: number;
  readonly #db: SqlDatabase;
  readonly #now: () => number;
  readonly #log: ProcessLog;
  readonly #jobs: JobQueue;
  readonly #events: ProcessEvents;
  readonly #runner: RunnerSide;
  readonly #reports: JobReports;
  readonly #agent: AgentSide;
  readonly #control: RunnerControl;

  constructor(db: SqlDatabase, options: ProcessStoreOptions = {}) {
    const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
    // A chunk is at most a sixteenth of the ring, so the ring keeps little more than it must.
    const chunkChars =
      options.chunkChars ?? Math.max(2, Math.min(DEFAULT_CHUNK_CHARS, Math.floor(maxOutputChars / 16)));
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxOutputChars = maxOutputChars;
    this.sweepIntervalMs = options.lostAfterMs ?? DEFAULT_LOST_AFTER_MS;
    if (!(maxOutputChars >= 1 && chunkChars >= 2 && this.leaseMs > 0 && this.sweepIntervalMs > 0)) {
      throw new RangeError(
        'ProcessStore needs maxOutputChars >= 1, chunkChars >= 2, and positive leaseMs and lostAfterMs',
      );
    }
    this.#db = db;
    this.#events = new ProcessEvents(options.log);
    this.#now = options.now ?? Date.now;
    this.#log = new ProcessLog(db, { maxOutputChars, chunkChars });
    this.#jobs = new JobQueue(db);
    const maxRunningPerWorkspace = options.maxRunningPerWorkspace ?? DEFAULT_MAX_RUNNING_PER_WORKSPACE;
    if (!(Number.isSafeInteger(maxRunningPerWorkspace) && maxRunningPerWorkspace >= 1))
      throw new RangeError('ProcessStore needs maxRunningPerWorkspace >= 1');
    this.#runner = new RunnerSide({
      db,
      jobs: this.#jobs,
      events: this.#events,
      now: this.#now,
      leaseMs: this.leaseMs,
      maxRunningPerWorkspace,
    });
    this.#reports = new JobReports({
      db,
      jobs: this.#jobs,
      log: this.#log,
      events: this.#events,
      now: this.#now,
      leaseMs: this.leaseMs,
      wakeRunners: () => this.#runner.wakeForWaitingJobs(),
    });
    this.#control = new RunnerControl({
      db,
      jobs: this.#jobs,
      events: this.#events,
      now: this.#now,
      leaseMs: this.leaseMs,
    });
    this.#agent = new AgentSide({
      db,
      jobs: this.#jobs,
      log: this.#log,
      events: this.#events,
      now: this.#now,
      wakeRunners: () => this.#runner.wakeForWaitingJobs(),
    });
    applyProcessSchema(db);
  }

  // ---- the agent side: one workspace's view ----

  /** Records a queued process and enqueues its job, atomically; `inTransaction` runs inside the same transaction. */
  create(input: NewProcess, inTransaction?: () => void): ProcessRecord {
    return this.#agent.create(input, inTransaction);
  }

  /** The process, or undefined when it is absent or belongs to another workspace. */
  get(workspace: string, id: string): ProcessRecord | undefined {
    return this.#agent.get(workspace, id);
  }

  /** The process whatever its workspace: for the runner protocol, whose keys span workspaces. */
  record(id: string): ProcessRecord | undefined {
    const row = selectProcess(this.#db, id);
    return row === undefined ? undefined : recordOf(row);
  }

  /** The workspace's processes, oldest first. */
  list(workspace: string): ProcessRecord[] {
    return this.#agent.list(workspace);
  }

  /** exec's separate stdout and stderr, once its runner reported them. */
  execResult(id: string): ExecResult | undefined {
    return this.#agent.execResult(id);
  }

  /** bash `logs`: a page of the process's log. */
  readLogs(workspace: string, id: string, offset?: number, limit: number = DEFAULT_LOGS_LIMIT): LogPage {
    return this.#agent.readLogs(workspace, id, offset, limit);
  }

  /** Queues `input` (and, with `eof`, the end of input) for the process's stdin; returns input.length. */
  writeStdin(workspace: string, id: string, input: string, eof: boolean): number {
    return this.#agent.writeStdin(workspace, id, input, eof);
  }

  /**
   * A queued process never runs: it is `stopped` at once. A running one keeps running until
   * its runner, told at once through its waiting control request, reports the end. A finished
   * one is returned as is.
   */
  requestStop(workspace: string, id: string, graceMs: number): ProcessRecord {
    return this.#agent.requestStop(workspace, id, graceMs);
  }

  /** Removes every process of the workspace with its output, stdin and job; their runners' next reports are refused. */
  deleteWorkspace(workspace: string): void {
    this.#agent.deleteWorkspace(workspace);
  }

  // ---- the runner side: every report is fenced by the lease token and the key holding it ----
  // A wrong or stale token, or a job no longer leased, is refused with `conflict`; a current
  // token presented by another key with `forbidden`.

  /**
   * Leases the oldest queued job of a workspace in the holder's scope, or answers undefined when
   * none waits. The process stays queued until started().
   */
  lease(runnerId: string, holder: LeaseHolder, wish?: LeaseWish): JobLease | undefined {
    return this.#runner.lease(runnerId, holder, wish);
  }

  /**
   * Leases one named job when it is still queued, in the holder's scope and free to run now; else
   * answers `gone` (it will never be leased: drop the offer) or `later` (keep offering it): for
   * homes where a dispatcher hands job ids to runners (at least once) and this store decides who
   * gets the job.
   */
  leaseJob(id: string, runnerId: string, holder: LeaseHolder, wish?: LeaseWish): JobLease | 'gone' | 'later' {
    return this.#runner.leaseJob(id, runnerId, holder, wish);
  }

  /** Refuses (`forbidden`) a key without a live lease on a job of the workspace: reading its manifest or blobs needs one. */
  assertLeaseIn(workspace: string, keyId: string): void {
    this.#runner.assertLeaseIn(workspace, keyId);
  }

  /** The jobs waiting for a runner, oldest first, with how often each was leased before (a requeued job again). */
  queuedJobs(): { id: string; attempts: number }[] {
    return this.#jobs.queued();
  }

  /** Marks the process running and renews the lease; a repeated report changes nothing. */
  started(id: string, fence: LeaseFence, pid: number): ProcessRecord {
    return this.#reports.started(id, fence, pid);
  }

  /**
   * Appends a batch of output and renews the lease; returns the log's new end. With `offset`
   * (where the runner's batch starts) a resent batch is appended only past what is already
   * held, so a retry after a lost answer does not duplicate output; a gap is a conflict.
   */
  appendOutput(id: string, fence: LeaseFence, data: string, offset?: number, skipped?: number): number {
    return this.#reports.appendOutput(id, fence, data, offset, skipped);
  }

  /** Renews the lease and hands over pending stdin (each chunk once, in order) and any stop request. */
  heartbeat(id: string, fence: LeaseFence, stdinAck?: number): ControlReply {
    return this.#control.heartbeat(id, fence, stdinAck);
  }

  /**
   * A heartbeat that may wait up to `request.waitMs` for stdin or a stop and answers as soon as one
   * is written: how stdin and stop reach a running process at once (see RunnerControl.control).
   */
  control(id: string, fence: LeaseFence, request: ControlRequest, signal?: AbortSignal): Promise<ControlReply> {
    return this.#control.control(id, fence, request, signal);
  }

  /** Checks the fence and renews the lease, touching nothing else. */
  renew(id: string, fence: LeaseFence): void {
    this.#reports.renew(id, fence);
  }

  /**
   * Records the end and completes the job; a process asked to stop ends `stopped` whatever is
   * reported. A replay with the token that finished it returns the record unchanged.
   */
  finish(id: string, fence: LeaseFence, result: FinishReport): ProcessRecord {
    return this.#reports.finish(id, fence, result);
  }

  /**
   * Settles every lease that expired before now. A lease already spans leaseMs past its last
   * renewal, so sweeping every sweepIntervalMs makes a vanished runner's job lost within
   * lease + sweepIntervalMs. A started process is `lost` (it may have had side effects); an
   * unstarted one is queued again for another runner, or `failed` after its third lease.
   * Returns the ids of the processes it marked lost.
   */
  sweep(): string[] {
    return this.#runner.sweep();
  }

  /** What a sync-back with this id answered, when one was recorded (its retry must not commit again). */
  syncResult<T>(id: string, syncId: string): T | undefined {
    return this.#reports.syncResult<T>(id, syncId);
  }

  /** Records a sync-back's answer; run inside the transaction that commits it. */
  recordSync(id: string, syncId: string, result: unknown): void {
    this.#reports.recordSync(id, syncId, result);
  }

  /** Whether any job is queued or running: a home that sweeps on a timer sweeps only then. */
  hasActiveJobs(): boolean {
    return this.#db.query("SELECT 1 AS active FROM processes WHERE status IN ('queued', 'running') LIMIT 1").length > 0;
  }

  // ---- waiting without polling ----

  /** Called with a process id after each change of it: started, output, stdin, stop requested, ended, deleted. */
  onChange(listener: (id: string) => void): () => void {
    return this.#events.onChange(listener);
  }

  /** How many listen for changes (log streams, waits): what tests read to see that a closed stream let go. */
  get changeListeners(): number {
    return this.#events.changeListeners;
  }

  /** Called whenever a job is enqueued or queued again. */
  onQueued(listener: () => void): () => void {
    return this.#events.onQueued(listener);
  }

  /** Resolves with the record once it is final, or with the current record after timeoutMs. */
  waitForEnd(workspace: string, id: string, timeoutMs: number): Promise<ProcessRecord> {
    const current = (): ProcessRecord => recordOf(this.#agent.owned(workspace, id));
    try {
      const record = current();
      if (FINAL_STATUSES.includes(record.status)) return Promise.resolve(record);
    } catch (error) {
      return Promise.reject(error);
    }
    const subscribe = (notice: () => void) =>
      this.onChange((changed) => {
        if (changed === id) notice();
      });
    // A deleted process answers not_found through current().
    const isDone = () => {
      const row = selectProcess(this.#db, id);
      return row === undefined || isFinal(row);
    };
    return waitFor(subscribe, isDone, current, timeoutMs);
  }

  /**
   * Resolves at once when a job of a workspace in `scope` waits, else when such a job is queued and
   * picks this waiter (one waiter per notice, oldest first) or after timeoutMs. A waiter answered
   * 'woken' that does not take the job must call `passOnJob`, so a job is never left waiting while
   * other waiters sleep.
   */
  waitForJob(holder: LeaseHolder, wish: LeaseWish, timeoutMs: number): Promise<'woken' | 'timed-out'> {
    if (this.#runner.hasJobFor(holder, wish)) return Promise.resolve('woken');
    return this.#events.waitForJob(holder.workspaces, wish.execOnly ?? false, timeoutMs);
  }

  /** After a woken waiter's lease attempt: while jobs wait that a runner may take now, the next waiting lease request that may take one is woken. */
  passOnJob(): void {
    this.#runner.wakeForWaitingJobs();
  }
}

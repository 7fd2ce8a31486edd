// The runner's control request: a heartbeat that hands over stdin and a stop, and may wait for them.
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { JobQueue } from './job-queue.ts';
import { waitFor, type ProcessEvents } from './process-events.ts';
import { selectProcess } from './process-row.ts';
import type { ControlReply } from '../contract/runner-protocol.ts';
import type { LeaseFence } from './runner-reports.ts';

/** What a control request asks. */
export interface ControlRequest {
  /** The last stdin seq the runner has applied. */
  stdinAck?: number;
  /** The runner has the stop request: it alone no longer answers a waiting request. */
  stopAck?: boolean;
  /** How long to wait for stdin or a stop when none is pending; 0 or absent answers at once. */
  waitMs?: number;
}

export interface RunnerControlParts {
  db: SqlDatabase;
  jobs: JobQueue;
  events: ProcessEvents;
  now: () => number;
  leaseMs: number;
}

/**
 * The runner keeps one control request open per running process, so stdin and a stop reach the
 * command as soon as they are written, without polling: the wait listens for the store's own
 * change notices, which fire after each commit in this process (one store per database).
 */
export class RunnerControl {
  readonly #db: SqlDatabase;
  readonly #jobs: JobQueue;
  readonly #events: ProcessEvents;
  readonly #now: () => number;
  readonly #leaseMs: number;

  constructor(parts: RunnerControlParts) {
    this.#db = parts.db;
    this.#jobs = parts.jobs;
    this.#events = parts.events;
    this.#now = parts.now;
    this.#leaseMs = parts.leaseMs;
  }

  /**
   * Renews the lease and hands out pending stdin. With `stdinAck` (the last seq the runner has
   * applied) only what it acknowledged is dropped, so stdin in a reply that never arrived is
   * handed out again; the acknowledged row itself stays, keeping seq rising. Without it, what is
   * handed out is dropped at once (at most once).
   */
  heartbeat(id: string, fence: LeaseFence, stdinAck?: number): ControlReply {
    return this.#db.transaction(() => {
      this.#jobs.fence(id, fence);
      this.#jobs.renew(id, this.#now() + this.#leaseMs);
      if (stdinAck !== undefined)
        this.#db.query('DELETE FROM process_stdin WHERE process_id = ? AND seq < ?', id, stdinAck);
      return this.#handOut(id, stdinAck);
    });
  }

  /**
   * A heartbeat that may wait. It renews the lease and answers at once when there is stdin past
   * `stdinAck`, a stop the runner does not have yet (`stopAck`), or the job is no longer this
   * lease's; else at the first change that brings one of these, or after `waitMs` (at most half a
   * lease, so the lease outlives the wait) with an empty reply. The wait holds no transaction: the
   * answer is read afresh under the fence, without renewing, so a runner that hung up mid-wait
   * keeps no lease. An aborted `signal` ends the wait unanswered.
   */
  async control(id: string, fence: LeaseFence, request: ControlRequest, signal?: AbortSignal): Promise<ControlReply> {
    const first = this.heartbeat(id, fence, request.stdinAck);
    const waitMs = Math.min(request.waitMs ?? 0, Math.floor(this.#leaseMs / 2));
    if (waitMs <= 0 || first.stdin.length > 0 || (first.stop !== null && request.stopAck !== true)) return first;
    const subscribe = (notice: () => void): (() => void) => {
      const off = this.#events.onChange((changed) => {
        if (changed === id) notice();
      });
      signal?.addEventListener('abort', notice);
      return () => {
        off();
        signal?.removeEventListener('abort', notice);
      };
    };
    const due = () => signal?.aborted === true || this.#controlDue(id, fence.token, request);
    await waitFor(subscribe, due, () => undefined, waitMs);
    // Nobody hears the answer of a request whose runner hung up.
    if (signal?.aborted) return first;
    return this.#db.transaction(() => {
      this.#jobs.fence(id, fence);
      return this.#handOut(id, request.stdinAck);
    });
  }

  /** Pending stdin past `stdinAck` (dropped once handed out when there is no ack) and any stop request; runs in the caller's transaction. */
  #handOut(id: string, stdinAck: number | undefined): ControlReply {
    const pending = this.#db.query<{ seq: number; data: string; eof: number }>(
      'SELECT seq, data, eof FROM process_stdin WHERE process_id = ? AND seq > ? ORDER BY seq',
      id,
      stdinAck ?? 0,
    );
    const last = pending.at(-1);
    if (stdinAck === undefined && last !== undefined)
      this.#db.query('DELETE FROM process_stdin WHERE process_id = ? AND seq <= ?', id, last.seq);
    // A fenced job's process row exists: deleting a workspace deletes the job with it.
    const graceMs = selectProcess(this.#db, id)!.stop_requested_grace_ms;
    return {
      stdin: pending.map((chunk) => ({ seq: chunk.seq, data: chunk.data, eof: chunk.eof !== 0 })),
      stop: graceMs === null ? null : { graceMs },
    };
  }

  /** Whether a waiting control request has something to answer; one read, no transaction. */
  #controlDue(id: string, token: number, request: ControlRequest): boolean {
    const [row] = this.#db.query<{ stop: number | null; state: string | null; token: number | null; stdin: number }>(
      `SELECT processes.stop_requested_grace_ms AS stop, jobs.state AS state, jobs.lease_token AS token,
         EXISTS (SELECT 1 FROM process_stdin WHERE process_stdin.process_id = processes.id AND process_stdin.seq > ?) AS stdin
       FROM processes LEFT JOIN jobs ON jobs.id = processes.id WHERE processes.id = ?`,
      request.stdinAck ?? 0,
      id,
    );
    // A process gone, ended, lost or leased again is due too: the fenced answer tells its runner to let go.
    if (row === undefined || row.state !== 'leased' || row.token !== token) return true;
    return row.stdin !== 0 || (row.stop !== null && request.stopAck !== true);
  }
}

// What a runner is handed and what it reports back: the shapes of the runner side of the process store.
import type { WorkspaceScope } from '../core/workspace-scope.ts';
import type { ProcessRecord } from './process-record.ts';

/** Who asks for a lease: the runner key's id and the workspaces it may serve. */
export interface LeaseHolder {
  keyId: string;
  workspaces: WorkspaceScope;
}

/**
 * What every report about a leased job carries: the lease's fencing token and the key presenting
 * it. The token alone is a small counter, so the key must be the one that holds the lease.
 */
export interface LeaseFence {
  token: number;
  keyId: string;
}

/** A job leased to a runner: the token must accompany every report about it. */
export interface LeasedJob {
  processId: string;
  token: number;
  /** How long the lease lasts without a heartbeat or output batch renewing it. */
  leaseMs: number;
  record: ProcessRecord;
}

/** What a heartbeat hands back: stdin written since the last one, in order, and any stop request. */
export interface HeartbeatReply {
  /** Pending stdin in order; `seq` rises per process, so a runner acknowledging it never applies a chunk twice. */
  stdin: { seq: number; data: string; eof: boolean }[];
  /** Present on every heartbeat from the request on, so a lost reply loses nothing. */
  stop: { graceMs: number } | null;
}

/** How a process ended, as its runner reports it. */
export interface FinishReport {
  exitCode: number | null;
  timedOut?: boolean;
  /** `stopped` is recorded whatever is reported here once a stop was requested. */
  status: 'exited' | 'stopped' | 'failed';
  error?: string;
  conflicts?: string[];
  /** exec only: its separate streams, kept for the exec answer. */
  stdout?: string;
  stderr?: string;
  truncated?: boolean;
}

/** exec's separate stdout and stderr, as its runner reported them at the end. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

export const FINISH_STATUSES: readonly FinishReport['status'][] = ['exited', 'stopped', 'failed'];

// The process store's side of leases: who holds one, the fence its reports carry, and the job it hands out.
// The wire shapes a runner is handed and reports back are contract/runner-protocol.ts's.
import { finishReportSchema, type FinishReport } from '../contract/runner-protocol.ts';
import type { ProcessRecord } from './process-record.ts';
import type { LeaseHolder } from '../contract/store-records.ts';

/** Who asks for a lease: the runner key's id and the workspaces it may serve. */
export type { LeaseHolder };

/**
 * What every report about a leased job carries: the lease's fencing token and the key presenting
 * it. The token alone is a small counter, so the key must be the one that holds the lease.
 */
export interface LeaseFence {
  token: number;
  keyId: string;
}

/**
 * A job as the process store leases it: the token must accompany every report about it. The
 * runner is told the wire job (contract/runner-protocol.ts's leasedJobSchema) made from its record.
 */
export interface JobLease {
  processId: string;
  token: number;
  /** How long the lease lasts without a heartbeat or output batch renewing it. */
  leaseMs: number;
  record: ProcessRecord;
}

/** exec's separate stdout and stderr, as its runner reported them at the end. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

export const FINISH_STATUSES: readonly FinishReport['status'][] = finishReportSchema.shape.status.options;

// The services behind the tool routes, built on one SQL database: keys, approvals, metering, calls.
import { ApprovalStore } from '../approvals/approval-store.ts';
import { KeyStore } from '../keys/key-store.ts';
import { RateLimiter } from '../metering/rate-limiter.ts';
import { UsageMeter } from '../metering/usage-meter.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolLimits } from '../tools/tool.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { ToolCalls, type ToolCallsOptions } from './tool-calls.ts';
import type { Log } from '../core/log.ts';

export interface CallServicesOptions {
  db: SqlDatabase;
  tools: ToolRegistry;
  workspaces: Workspaces;
  limits: ToolLimits;
  processes?: ProcessStore;
  /** See ToolCallsOptions.searchThreads. */
  searchThreads?: ToolCallsOptions['searchThreads'];
  /** See ToolCallsOptions.edgeEngine. */
  edgeEngine?: ToolCallsOptions['edgeEngine'];
  approvalTtlMs?: number;
  /** See ToolCallsOptions.processAccrualMs. */
  processAccrualMs?: number;
  rateLimitPerMinute?: number;
  log?: Log;
  /** See ToolCallsOptions.afterCall. */
  afterCall?: ToolCallsOptions['afterCall'];
  /** See ToolCallsOptions.egress. */
  egress?: ToolCallsOptions['egress'];
}

export interface CallServices {
  keys: KeyStore;
  meter: UsageMeter;
  approvals: ApprovalStore;
  calls: ToolCalls;
}

/** Builds the services and settles what a stopped server left open; call `calls.stop()` on shutdown. */
export function createCallServices(options: CallServicesOptions): CallServices {
  const keys = new KeyStore(options.db);
  const meter = new UsageMeter(options.db, Date.now, options.log);
  const approvals = new ApprovalStore(options.db);
  const calls = new ToolCalls({
    tools: options.tools,
    workspaces: options.workspaces,
    keys,
    approvals,
    meter,
    rateLimiter: new RateLimiter(),
    limits: options.limits,
    processes: options.processes,
    searchThreads: options.searchThreads,
    edgeEngine: options.edgeEngine,
    approvalTtlMs: options.approvalTtlMs ?? 3_600_000,
    processAccrualMs: options.processAccrualMs,
    defaultRateLimitPerMinute: options.rateLimitPerMinute ?? 0,
    log: options.log,
    afterCall: options.afterCall,
    egress: options.egress,
  });
  calls.start();
  return { keys, meter, approvals, calls };
}

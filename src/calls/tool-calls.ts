// Every tool call's way through: scope and allowlist, the approval policy, the rate limit and
// quota, execution, and exactly one usage record, whatever the outcome.
import { approvalDecision, toolAllowed } from '../approvals/approval-policy.ts';
import { deliverNotice } from '../approvals/approval-notifier.ts';
import { noEgress, type EgressFetch } from '../core/egress-fetch.ts';
import { publicApproval, type Approval, type ApprovalStore } from '../approvals/approval-store.ts';
import { INTERNAL_MESSAGE, isToolError, ToolError } from '../core/errors.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import type { CallIdentity, CallOutcome, UsageMeter } from '../metering/usage-meter.ts';
import { waitFor } from '../processes/process-events.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolLimits } from '../tools/tool.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { Workspaces } from '../workspace/workspaces.ts';
import { byteLength, errorAnswer, finalAnswer, jsonAnswer, type CallAnswer } from './call-answers.ts';
import { ProcessTime } from './process-time.ts';

export { finalAnswer, type CallAnswer } from './call-answers.ts';

/** Keys as calls need them after admission: an approved call's key may have been revoked meanwhile. */
export interface KeyLookup {
  get(id: string): ApiKey | undefined | Promise<ApiKey | undefined>;
  notifySecret(id: string): string | undefined | Promise<string | undefined>;
}

/** Takes one call from a key's rate limit, or throws `rate_limited`. */
export interface CallLimiter {
  take(keyId: string, perMinute: number): void | Promise<void>;
}

/**
 * A quota kept apart from the usage records, for homes whose records are spread over several
 * databases (one per workspace): it admits calls one at a time for all of them. Without one,
 * the meter checks the quota against its own records in the transaction that opens the call's.
 */
export interface QuotaLedger {
  /** Counts one admitted call against the key's quota, or throws `quota_exceeded`. */
  admit(key: ApiKey, options: { usesProcessTime: boolean }): Promise<void>;
  /** Adds process seconds of one of the key's calls (started at `startedAt`) as they are counted. */
  addProcessSeconds(keyId: string, startedAt: number, seconds: number): Promise<void>;
  /** Whether the key's processSeconds quota is spent. */
  processSecondsSpent(key: ApiKey): Promise<boolean>;
}

export interface ToolCallsOptions {
  tools: ToolRegistry;
  workspaces: Workspaces;
  keys: KeyLookup;
  approvals: ApprovalStore;
  meter: UsageMeter;
  rateLimiter: CallLimiter;
  quotaLedger?: QuotaLedger;
  limits: ToolLimits;
  processes?: ProcessStore;
  /** How long an approval may stay pending before it is rejected as `expired`. */
  approvalTtlMs: number;
  /** Tool calls a minute for keys without their own limit; 0 means unlimited. */
  defaultRateLimitPerMinute: number;
  now?: () => number;
  /** Where failures that the caller never sees (undelivered notices, internal errors) are reported. */
  log?: (message: string, error?: unknown) => void;
  /** How often running processes' seconds are counted against quotas (default 10 s; API.md: at least every 30 s). */
  processAccrualMs?: number;
  /** Runs after a call's effect landed, before it answers (an automatic checkpoint); a failure is logged, never the call's. */
  afterCall?: (call: { tool: string; args: unknown; workspace: Workspace; result: unknown }) => Promise<void>;
  /** What approval notices go out through: the home's egress guard (without one, no notice is sent). */
  egress?: EgressFetch;
}

export interface CallRequest {
  key: ApiKey;
  workspace: string;
  tool: string;
  /** Reads the body: the parsed arguments and the bytes received. */
  readArguments: () => Promise<{ value: unknown; bytes: number }>;
  /** Waits this long for an approver's decision before answering 202. */
  waitMs?: number;
}


/** The longest a caller may wait for an approval decision. */
export const MAX_WAIT_MS = 60_000;


export class ToolCalls {
  private readonly now: () => number;
  private readonly decided = new Map<string, Set<() => void>>();
  private expiryTimer: ReturnType<typeof setTimeout> | undefined;
  private expiryAt = Infinity;
  /** Process seconds of started processes: counted as they run and when they end. */
  readonly processTime: ProcessTime | undefined;

  constructor(private readonly options: ToolCallsOptions) {
    this.now = options.now ?? Date.now;
    const { processes } = options;
    this.processTime =
      processes &&
      new ProcessTime({ meter: options.meter, processes, keys: options.keys, quotaLedger: options.quotaLedger, now: this.now, log: (message, error) => this.log(message, error), accrualMs: options.processAccrualMs });
  }

  /**
   * Brings what a stopped server left behind to a final state: approved calls that were running
   * end as `unavailable`, open usage records close, ended processes add their run time. Then
   * keeps process run times up to date and expires approvals on time.
   */
  start(): void {
    const { approvals, meter } = this.options;
    for (const approval of approvals.interrupted()) {
      const error = { code: 'unavailable' as const, message: 'The server stopped while this approved call ran; it may or may not have happened. Check the workspace before retrying.' };
      approvals.complete(approval.id, { error }, () => meter.finish(approval.usageId, { outcome: 'interrupted', bytesOut: 0, durationMs: 0 }));
    }
    meter.closeInterrupted();
    this.processTime?.start();
    this.expire();
  }

  stop(): void {
    this.processTime?.stop();
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }

  /** Runs one tool call to its answer; never throws. */
  async call(request: CallRequest): Promise<CallAnswer> {
    const { key, workspace: workspaceId, tool: toolName } = request;
    const identity: CallIdentity = { keyId: key.id, workspace: workspaceId, tool: toolName, action: undefined, bytesIn: 0, startedAt: this.now() };
    let admitted: { args: unknown; workspace: Workspace; needsApproval: boolean };
    /** The call's record, written ahead when a quota or an approval needs it. */
    let usageId: number | undefined;
    try {
      admitted = await this.check(request, identity);
      if (key.quota !== undefined || admitted.needsApproval) {
        const usesProcessTime = identity.tool === 'bash' && (identity.action === 'exec' || identity.action === 'start');
        const { quotaLedger } = this.options;
        if (quotaLedger && key.quota !== undefined) await quotaLedger.admit(key, { usesProcessTime });
        usageId = this.options.meter.admit(quotaLedger ? { id: key.id, quota: undefined } : key, identity, { usesProcessTime });
      }
    } catch (error) {
      const answer = this.errorAnswer(error);
      await this.options.meter.settle(identity, { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: this.now() - identity.startedAt }, { billable: false });
      return answer;
    }
    if (!admitted.needsApproval) {
      const ran = await this.execute(identity, admitted.args, admitted.workspace, usageId);
      if (usageId !== undefined) this.options.meter.finish(usageId, ran.outcome);
      else await this.options.meter.settle(identity, ran.outcome, { billable: true, effectKey: ran.effectKey });
      this.countStarted(ran.outcome);
      this.reportSeconds(identity.keyId, identity.startedAt, ran.outcome.processSeconds);
      return ran.answer;
    }
    const reserved = usageId!;
    const approval = this.options.approvals.create(
      { tool: toolName, action: identity.action, arguments: admitted.args, workspace: workspaceId, keyId: key.id, usageId: reserved, bytesIn: identity.bytesIn, ttlMs: this.options.approvalTtlMs },
      (created) => this.options.meter.awaitApproval(reserved, created.id),
    );
    this.scheduleExpiry(Date.parse(approval.expiresAt));
    this.notify(key, approval);
    if (request.waitMs !== undefined && request.waitMs > 0) {
      const settled = await waitFor(
        (notice) => this.onDecided(approval.id, notice),
        () => concluded(this.options.approvals.get(approval.id)),
        () => this.options.approvals.get(approval.id)!,
        Math.min(request.waitMs, MAX_WAIT_MS),
      );
      if (concluded(settled)) return finalAnswer(settled);
      return jsonAnswer(202, { approval: publicApproval(settled) });
    }
    return jsonAnswer(202, { approval: publicApproval(approval) });
  }

  /** An approval the key may see: its own calls, or (approvers, admins) those of its workspaces. */
  getApproval(key: ApiKey, id: string): Approval {
    this.expire();
    const approval = this.options.approvals.get(id);
    if (!approval || !maySee(key, approval)) throw new ToolError('not_found', `Approval ${id} does not exist.`, { approvalId: id });
    return approval;
  }

  listApprovals(key: ApiKey, status: Approval['status'] | undefined, limit: number): Approval[] {
    this.expire();
    return key.role === 'agent'
      ? this.options.approvals.list({ status, keyId: key.id, limit })
      : this.options.approvals.list({ status, workspaces: key.workspaces, limit });
  }

  /** An approver's decision; approving runs the call (once) before answering with its outcome. */
  async decide(key: ApiKey, id: string, decision: 'approve' | 'reject', reason: string | undefined): Promise<Approval> {
    if (key.role !== 'approver' && key.role !== 'admin') {
      throw new ToolError('forbidden', `Deciding approvals needs a key with the role approver or admin; this key has the role ${key.role}.`);
    }
    const approval = this.getApproval(key, id);
    const { approvals, meter } = this.options;
    if (decision === 'reject') {
      const rejected = approvals.decide(approval.id, 'reject', key.id, reason, (decided) => {
        meter.finish(decided.usageId, { outcome: 'approval_rejected', bytesOut: byteLength(finalAnswer(decided).json), durationMs: 0 });
      });
      this.announce(id);
      return rejected;
    }
    approvals.decide(approval.id, 'approve', key.id, reason);
    this.announce(id);
    const done = await this.runApproved(approval);
    this.announce(id);
    return done;
  }

  /** Rejects pending approvals whose time is up (as `expired`) and wakes whoever waits on them. */
  expire(): void {
    const { approvals, meter } = this.options;
    const expired = approvals.expireDue((approval) => {
      meter.finish(approval.usageId, { outcome: 'approval_rejected', bytesOut: byteLength(finalAnswer(approval).json), durationMs: 0 });
    });
    for (const approval of expired) this.announce(approval.id);
    const next = approvals.nextExpiry();
    if (next !== undefined) this.scheduleExpiry(next);
  }

  private async check(request: CallRequest, identity: CallIdentity): Promise<{ args: unknown; workspace: Workspace; needsApproval: boolean }> {
    const { key } = request;
    if (!canSeeWorkspace(key, request.workspace)) {
      throw new ToolError('not_found', `Workspace ${request.workspace} does not exist; create it with PUT /v1/workspaces/${request.workspace}.`, { workspace: request.workspace });
    }
    const tool = this.options.tools.get(request.tool);
    if (!toolAllowed(key, tool.name, undefined)) throw notAllowed(tool.name, undefined);
    const body = await request.readArguments();
    identity.bytesIn = body.bytes;
    const args = this.options.tools.parse(tool.name, body.value);
    identity.action = tool.name === 'bash' ? (args as { action: string }).action : undefined;
    if (!toolAllowed(key, tool.name, identity.action)) throw notAllowed(tool.name, identity.action);
    const decision = approvalDecision(key, tool, identity.action);
    if (decision === 'deny') throw notAllowed(tool.name, identity.action, 'a rule of this key denies it');
    const workspace = this.options.workspaces.open(request.workspace);
    const perMinute = key.rateLimitPerMinute ?? this.options.defaultRateLimitPerMinute;
    if (perMinute > 0) await this.options.rateLimiter.take(key.id, perMinute);
    return { args, workspace, needsApproval: decision === 'approve' };
  }

  /** Executes an admitted call; the outcome is for its usage record, which the caller closes. */
  private async execute(identity: CallIdentity, args: unknown, workspace: Workspace, usageId: number | undefined): Promise<Executed> {
    const started = this.now();
    const { meter, limits, processes } = this.options;
    // Without a record ahead, the effect's transaction writes one, found again by this key.
    const effectKey = usageId === undefined ? crypto.randomUUID() : undefined;
    const recordEffect = usageId === undefined ? () => meter.recordEffect(identity, effectKey!) : () => meter.markEffect(usageId);
    try {
      const result = await this.options.tools.get(identity.tool).execute(args, { workspace, limits, processes, recordEffect });
      await this.options.afterCall?.({ tool: identity.tool, args, workspace, result }).catch((error: unknown) => this.log(`after ${identity.tool} in ${workspace.id}`, error));
      const answer = jsonAnswer(200, { result });
      const outcome: CallOutcome = { outcome: 'ok', bytesOut: byteLength(answer.json), durationMs: this.now() - started, ...processUse(identity.action, result) };
      return { answer, outcome, result, effectKey };
    } catch (error) {
      const answer = this.errorAnswer(error);
      const outcome: CallOutcome = { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: this.now() - started };
      const failure = isToolError(error) ? { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } : { code: 'internal' as const, message: INTERNAL_MESSAGE };
      return { answer, outcome, error: failure, effectKey };
    }
  }

  /** Runs an approved call with the caller's key and records its outcome on the approval and its usage record. */
  private async runApproved(approval: Approval): Promise<Approval> {
    const { approvals, meter } = this.options;
    const identity: CallIdentity = { keyId: approval.keyId, workspace: approval.workspace, tool: approval.tool, action: approval.action, bytesIn: approval.bytesIn, startedAt: this.now() };
    let ran: Executed;
    try {
      if ((await this.options.keys.get(approval.keyId)) === undefined) {
        throw new ToolError('forbidden', 'The key that made this call was revoked before it was approved; the call did not run.', { keyId: approval.keyId });
      }
      const workspace = this.options.workspaces.open(approval.workspace);
      const args = this.options.tools.parse(approval.tool, approval.arguments);
      ran = await this.execute(identity, args, workspace, approval.usageId);
    } catch (error) {
      const answer = this.errorAnswer(error);
      const failure = isToolError(error) ? { code: error.code, message: error.message } : { code: 'internal' as const, message: INTERNAL_MESSAGE };
      ran = { answer, outcome: { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: 0 }, error: failure };
    }
    const outcome = ran.error === undefined ? { result: ran.result } : { error: ran.error };
    const done = approvals.complete(approval.id, outcome, () => meter.finish(approval.usageId, ran.outcome));
    this.countStarted(ran.outcome);
    this.reportSeconds(approval.keyId, identity.startedAt, ran.outcome.processSeconds);
    return done;
  }

  /** A process that a call started and that already ended adds its run time now. */
  private countStarted(outcome: CallOutcome): void {
    if (outcome.processId !== undefined) this.processTime?.countStarted(outcome.processId);
  }

  /** Tells the quota ledger (when there is one) the process seconds an exec used. */
  private reportSeconds(keyId: string, startedAt: number, seconds: number | undefined): void {
    this.processTime?.report(keyId, startedAt, seconds);
  }

  private notify(key: ApiKey, approval: Approval): void {
    const url = key.notifyUrl;
    if (url === undefined) return;
    void (async () => {
      const secret = await this.options.keys.notifySecret(key.id);
      if (secret === undefined) return;
      const body = JSON.stringify({ type: 'approval.created', approval: publicApproval(approval) });
      await deliverNotice({ url, secret, body, deliveryId: approval.id }, { fetch: this.options.egress ?? noEgress, onFailure: (message) => this.log(message) });
    })().catch((error: unknown) => this.log(`could not notify ${url} of approval ${approval.id}`, error));
  }

  private onDecided(id: string, notice: () => void): () => void {
    let listeners = this.decided.get(id);
    if (!listeners) this.decided.set(id, (listeners = new Set()));
    listeners.add(notice);
    return () => {
      listeners.delete(notice);
      if (listeners.size === 0) this.decided.delete(id);
    };
  }

  private announce(id: string): void {
    for (const notice of [...(this.decided.get(id) ?? [])]) notice();
  }

  private scheduleExpiry(at: number): void {
    if (at >= this.expiryAt && this.expiryTimer !== undefined) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = at;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = undefined;
      this.expiryAt = Infinity;
      this.expire();
    }, Math.min(Math.max(0, at - this.now()) + 5, 2_147_483_647));
    this.expiryTimer.unref?.();
  }

  private errorAnswer(error: unknown): CallAnswer {
    if (!isToolError(error)) this.log('internal error in a tool call', error);
    return errorAnswer(error);
  }

  private log(message: string, error?: unknown): void {
    (this.options.log ?? ((text: string, cause?: unknown) => console.error(`toolgate: ${text}`, cause ?? '')))(message, error);
  }
}

function notAllowed(tool: string, action: string | undefined, why = "it is not in this key's tool allowlist"): ToolError {
  const name = action === undefined ? tool : `${tool}:${action}`;
  return new ToolError('tool_not_allowed', `This key may not call ${name}: ${why}. Use another tool or ask for a key that allows it.`, { tool, ...(action === undefined ? {} : { action }) });
}

function maySee(key: ApiKey, approval: Approval): boolean {
  return key.role === 'agent' ? approval.keyId === key.id : canSeeWorkspace(key, approval.workspace);
}

/** Rejected, or approved and run: nothing more will happen to it. */
function concluded(approval: Approval | undefined): boolean {
  return approval !== undefined && (approval.status === 'rejected' || (approval.status === 'approved' && (approval.result !== undefined || approval.error !== undefined)));
}

function outcomeOf(error: unknown): string {
  return isToolError(error) ? error.code : 'internal';
}


interface Executed {
  answer: CallAnswer;
  outcome: CallOutcome;
  /** Set when the call ran without a record ahead: its effect's transaction may have written one under this key. */
  effectKey?: string;
  result?: unknown;
  error?: NonNullable<Approval['error']>;
}

/** bash's use of process time: an exec's run time now, a started process's when it ends. */
function processUse(action: string | undefined, result: unknown): Partial<CallOutcome> {
  const value = result as { durationMs?: unknown; processId?: unknown };
  if (action === 'exec' && typeof value.durationMs === 'number') return { processSeconds: value.durationMs / 1000 };
  if (action === 'start' && typeof value.processId === 'string') return { processId: value.processId };
  return {};
}

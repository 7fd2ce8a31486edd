// Every tool call's way through the gate: its checks (call-checks.ts), the rate limit and quota, an
// approver when the policy asks for one, its execution (call-execution.ts), and exactly one usage
// record, whatever the outcome.
import { ApprovalFlow, maySee } from '../approvals/approval-flow.ts';
import type { Approval, ApprovalStore } from '../approvals/approval-store.ts';
import { byteLength, type CallAnswer } from '../core/call-answer.ts';
import type { EgressFetch } from '../core/egress-fetch.ts';
import { INTERNAL_MESSAGE, isToolError, ToolError } from '../core/errors.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import type { ApiKey } from '../keys/key-store.ts';
import { ProcessTime } from '../metering/process-time.ts';
import type { CallAdmission } from '../metering/call-admission.ts';
import type { QuotaLedger } from '../metering/quota-ledger.ts';
import type { CallLimiter } from '../metering/rate-limiter.ts';
import type { CallIdentity, CallOutcome } from '../metering/usage-meter.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { checkCall, type Admitted, type CallChecks, type CheckedRequest } from './call-checks.ts';
import { executeCall, failureAnswer, outcomeOf, type CallExecution, type Executed } from './call-execution.ts';

/** The gate's answer: declared in core, named here too since every caller of the gate handles one. */
export type { CallAnswer } from '../core/call-answer.ts';

export interface ToolCallsOptions extends CallChecks, CallExecution {
  keys: KeyLookup;
  approvals: ApprovalStore;
  rateLimiter: CallLimiter;
  quotaLedger?: QuotaLedger;
  /** Where the rate limit and the ledger's quota are taken in one step (instead of rateLimiter, then quotaLedger). */
  admission?: CallAdmission;
  /** How long an approval may stay pending before it is rejected as `expired`. */
  approvalTtlMs: number;
  now?: () => number;
  /** Where failures that the caller never sees (undelivered notices, internal errors) are reported. */
  log?: Log;
  /** How often running processes' seconds are counted against quotas (default 10 s; docs/api.md: at least every 30 s). */
  processAccrualMs?: number;
  /** What approval notices go out through: the home's egress guard (without one, no notice is sent). */
  egress?: EgressFetch;
}

export interface CallRequest extends CheckedRequest {
  /** Waits this long for an approver's decision before answering 202. */
  waitMs?: number;
}

export class ToolCalls {
  private readonly now: () => number;
  private readonly approvalFlow: ApprovalFlow;
  /** How to end each read admitted by admitRead that is still open (see stop). */
  private readonly openReads = new Set<() => void>();
  /** Process seconds of started processes: counted as they run and when they end. */
  readonly processTime: ProcessTime | undefined;

  constructor(private readonly options: ToolCallsOptions) {
    this.now = options.now ?? Date.now;
    const log = (message: string, error?: unknown) => this.log(message, error);
    const { meter, processes } = options;
    this.approvalFlow = new ApprovalFlow({
      approvals: options.approvals,
      keys: options.keys,
      ttlMs: options.approvalTtlMs,
      now: this.now,
      log,
      egress: options.egress,
      closeRecord: (usageId, closing) => meter.finish(usageId, closing),
    });
    this.processTime =
      processes &&
      new ProcessTime({
        meter,
        processes,
        keys: options.keys,
        quotaLedger: options.quotaLedger,
        now: this.now,
        log,
        accrualMs: options.processAccrualMs,
      });
  }

  /**
   * Brings what a stopped server left behind to a final state: approved calls that were running
   * end as `unavailable`, open usage records close, ended processes add their run time. Then
   * keeps process run times up to date and expires approvals on time.
   */
  start(): void {
    this.approvalFlow.concludeInterrupted();
    this.options.meter.closeInterrupted();
    this.processTime?.start();
    this.approvalFlow.expire();
  }

  stop(): void {
    // Reads still open end now, so their records are among those committed below.
    for (const stopRead of [...this.openReads]) stopRead();
    // Records of calls that answered ahead of them are committed before the server goes.
    this.options.meter.flush();
    this.processTime?.stop();
    this.approvalFlow.stop();
  }

  /** Runs one tool call to its answer; never throws. */
  async call(request: CallRequest): Promise<CallAnswer> {
    const { key, workspace: workspaceId, tool: toolName } = request;
    const identity: CallIdentity = {
      keyId: key.id,
      workspace: workspaceId,
      tool: toolName,
      action: undefined,
      bytesIn: 0,
      startedAt: this.now(),
    };
    let admitted: Admitted;
    /** The call's record, written ahead when a quota or an approval needs it. */
    let usageId: number | undefined;
    try {
      admitted = await checkCall(this.options, request, identity);
      const usesProcessTime =
        identity.action !== undefined && admitted.tool.actions?.usingProcessTime.includes(identity.action) === true;
      await this.takeAllowance(key, admitted.perMinute, usesProcessTime);
      if (key.quota !== undefined || admitted.needsApproval) usageId = this.openRecord(key, identity, usesProcessTime);
    } catch (error) {
      return this.refused(identity, error);
    }
    if (!admitted.needsApproval) {
      const ran = await this.execute(identity, admitted.tool, admitted.args, admitted.workspace, usageId);
      if (usageId !== undefined) {
        this.options.meter.finish(usageId, ran.outcome);
      } else {
        // A call that changed nothing and used no process time answers before its record is committed.
        const deferrable =
          !ran.effected && ran.outcome.processSeconds === undefined && ran.outcome.processId === undefined;
        const recorded = this.options.meter.settle(identity, ran.outcome, {
          billable: true,
          effectKey: ran.effectKey,
          deferrable,
        });
        if (!deferrable) await recorded;
      }
      this.countProcessTime(identity, ran.outcome);
      return ran.answer;
    }
    const reserved = usageId!;
    const approval = this.approvalFlow.open(
      key,
      {
        tool: toolName,
        action: identity.action,
        arguments: admitted.args,
        workspace: workspaceId,
        keyId: key.id,
        keyName: key.name,
        usageId: reserved,
        bytesIn: identity.bytesIn,
      },
      (created) => this.options.meter.awaitApproval(reserved, created.id),
    );
    return this.approvalFlow.answer(approval, request.waitMs);
  }

  /**
   * Admits a read that stays open (a log stream) through the same checks as a call of `tool` with
   * `args`: scope, allowlist, policy, rate and quota. It is one call with one usage record, written
   * by `close` when the read ends; a refusal is recorded at once and thrown. A read cannot wait for
   * an approver, so a policy that asks for one refuses it.
   */
  async admitRead(request: {
    key: ApiKey;
    workspace: string;
    tool: string;
    args: unknown;
    /** Called when the server stops while the read is open: it must end the read (and `close` it) at once. */
    onStop: () => void;
  }): Promise<AdmittedRead> {
    const identity: CallIdentity = {
      keyId: request.key.id,
      workspace: request.workspace,
      tool: request.tool,
      action: undefined,
      bytesIn: 0,
      startedAt: this.now(),
    };
    let usageId: number | undefined;
    let admitted: Admitted;
    try {
      admitted = await checkCall(
        this.options,
        { ...request, readArguments: async () => ({ value: request.args, bytes: 0 }) },
        identity,
      );
      if (admitted.needsApproval) {
        const name = identity.action === undefined ? request.tool : `${request.tool}:${identity.action}`;
        throw new ToolError(
          'forbidden',
          `This key's policy asks an approver before each ${name}, and a stream cannot wait for one; call ${request.tool} instead.`,
          { tool: request.tool, ...(identity.action === undefined ? {} : { action: identity.action }) },
        );
      }
      await this.takeAllowance(request.key, admitted.perMinute, false);
      if (request.key.quota !== undefined) usageId = this.openRecord(request.key, identity, false);
    } catch (error) {
      this.refused(identity, error);
      throw error;
    }
    let closed = false;
    this.openReads.add(request.onStop);
    return {
      workspace: admitted.workspace,
      keyLive: () => this.keyLive(request.key),
      close: (outcome, bytesOut) => {
        if (closed) return;
        closed = true;
        this.openReads.delete(request.onStop);
        const ended: CallOutcome = { outcome, bytesOut, durationMs: this.now() - identity.startedAt };
        if (usageId !== undefined) this.options.meter.finish(usageId, ended);
        else void this.options.meter.settle(identity, ended, { billable: true, deferrable: true });
      },
    };
  }

  /** An approval the key may see: its own calls, or (approvers, admins) those of its workspaces. */
  getApproval(key: ApiKey, id: string): Approval {
    return this.approvalFlow.get(key, id);
  }

  /** Whether `key` is still live: a stream opened with it asks again as it goes on, and ends once it is revoked. */
  async keyLive(key: ApiKey): Promise<boolean> {
    return (await this.options.keys.get(key.id)) !== undefined;
  }

  /** Calls `listener` with each approval `key` may see, as it is created and as it changes; answers how to stop. */
  watchApprovals(key: ApiKey, listener: (approval: Approval) => void): () => void {
    return this.approvalFlow.watch((approval) => {
      if (maySee(key, approval)) listener(approval);
    });
  }

  /** Calls `listener` with every approval of this database as it is created and as it changes (a home passes them on). */
  onApprovalChange(listener: (approval: Approval) => void): () => void {
    return this.approvalFlow.watch(listener);
  }

  /** How many follow the approvals (streams, a home's hand-on): for tests that see a closed stream let go. */
  get approvalWatchers(): number {
    return this.approvalFlow.watcherCount;
  }

  listApprovals(key: ApiKey, status: Approval['status'] | undefined, limit: number): Approval[] {
    return this.approvalFlow.list(key, status, limit);
  }

  /** An approver's decision; approving runs the call (once) before answering with its outcome. */
  decide(key: ApiKey, id: string, decision: 'approve' | 'reject', reason: string | undefined): Promise<Approval> {
    return this.approvalFlow.decide(key, id, decision, reason, (approval) => this.runApproved(approval));
  }

  /** Rejects pending approvals whose time is up (as `expired`) and wakes whoever waits on them. */
  expire(): void {
    this.approvalFlow.expire();
  }

  /**
   * Takes the call from the key's rate limit and, when the home keeps a ledger apart, admits it
   * against the key's quota: in one step where the home has one (`admission`), else one after the other.
   */
  private async takeAllowance(key: ApiKey, perMinute: number, usesProcessTime: boolean): Promise<void> {
    const { admission, quotaLedger, rateLimiter } = this.options;
    const quota = quotaLedger !== undefined && key.quota !== undefined;
    if (admission) {
      if (perMinute > 0 || quota) await admission.admitCall(key, { perMinute, quota, usesProcessTime });
      return;
    }
    if (perMinute > 0) await rateLimiter.take(key.id, perMinute);
    if (quota) await quotaLedger.admit(key, { usesProcessTime });
  }

  /** Opens the call's record ahead, checking the key's quota against this meter's records unless a ledger apart admitted it. */
  private openRecord(key: ApiKey, identity: CallIdentity, usesProcessTime: boolean): number {
    return this.options.meter.admit(this.options.quotaLedger ? { id: key.id, quota: undefined } : key, identity, {
      usesProcessTime,
    });
  }

  /** The answer to a call refused before it ran, whose record (not billable) it settles. */
  private refused(identity: CallIdentity, error: unknown): CallAnswer {
    const answer = this.errorAnswer(error);
    // Refused before it ran, so it changed nothing: its record may follow the answer.
    void this.options.meter.settle(
      identity,
      { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: this.now() - identity.startedAt },
      { billable: false, deferrable: true },
    );
    return answer;
  }

  /** Executes an admitted call; the outcome is for its usage record, which the caller closes. */
  private execute(
    identity: CallIdentity,
    tool: Admitted['tool'],
    args: unknown,
    workspace: Workspace,
    usageId: number | undefined,
  ): Promise<Executed> {
    const log = (message: string, error?: unknown) => this.log(message, error);
    return executeCall({ ...this.options, now: this.now, log }, identity, tool, args, workspace, usageId);
  }

  /** Runs an approved call with the caller's key and records its outcome on the approval and its usage record. */
  private async runApproved(approval: Approval): Promise<Approval> {
    const { approvals, meter } = this.options;
    const identity: CallIdentity = {
      keyId: approval.keyId,
      workspace: approval.workspace,
      tool: approval.tool,
      action: approval.action,
      bytesIn: approval.bytesIn,
      startedAt: this.now(),
    };
    let ran: Executed;
    try {
      if ((await this.options.keys.get(approval.keyId)) === undefined) {
        throw new ToolError(
          'forbidden',
          'The key that made this call was revoked before it was approved; the call did not run.',
          { keyId: approval.keyId },
        );
      }
      const workspace = this.options.workspaces.open(approval.workspace);
      const tool = this.options.tools.get(approval.tool);
      const args = this.options.tools.parse(approval.tool, approval.arguments);
      ran = await this.execute(identity, tool, args, workspace, approval.usageId);
    } catch (error) {
      const answer = this.errorAnswer(error);
      const failure = isToolError(error)
        ? { code: error.code, message: error.message }
        : { code: 'internal' as const, message: INTERNAL_MESSAGE };
      ran = {
        answer,
        outcome: { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: 0 },
        error: failure,
      };
    }
    const outcome = ran.error === undefined ? { result: ran.result } : { error: ran.error };
    const done = approvals.complete(approval.id, outcome, () => meter.finish(approval.usageId, ran.outcome));
    this.countProcessTime(identity, ran.outcome);
    return done;
  }

  /** A started process that already ended adds its run time now; an exec's seconds go to the quota ledger (when there is one). */
  private countProcessTime(identity: CallIdentity, outcome: CallOutcome): void {
    if (outcome.processId !== undefined) this.processTime?.countStarted(outcome.processId);
    this.processTime?.report(identity.keyId, identity.startedAt, outcome.processSeconds);
  }

  private errorAnswer(error: unknown): CallAnswer {
    return failureAnswer(error, (message, cause) => this.log(message, cause));
  }

  private log(message: string, error?: unknown): void {
    (this.options.log ?? consoleLog)(message, error);
  }
}

/** A read admitted by `admitRead`: the workspace it reads, and how its one usage record is written when it ends (once; later calls do nothing). */
export interface AdmittedRead {
  workspace: Workspace;
  /** Whether the key the read was admitted with is still live (not revoked): asked again as it goes on. */
  keyLive(): Promise<boolean>;
  close(outcome: string, bytesOut: number): void;
}

// The gate every tool call passes: checks, allowance, an approver when asked, execution, exactly one usage record.
import { ApprovalFlow, maySee } from '../approvals/approval-flow.ts';
import type { Approval, ApprovalStore } from '../approvals/approval-store.ts';
import { byteLength, type CallAnswer } from '../core/call-answer.ts';
import type { EgressFetch } from '../core/egress-fetch.ts';
import { INTERNAL_MESSAGE, isToolError, ToolError } from '../core/errors.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import type { ApiKey } from '../keys/key-store.ts';
import { ProcessTime } from '../metering/process-time.ts';
import type { CallIdentity, CallOutcome } from '../metering/usage-meter.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { CallAllowance, type CallAllowanceOptions } from './call-allowance.ts';
import { checkCall, type Admitted, type CallChecks, type CheckedRequest } from './call-checks.ts';
import { executeCall, failureAnswer, outcomeOf, type CallExecution, type Executed } from './call-execution.ts';
import { ReadAdmission, type AdmittedRead, type ReadRequest } from './read-admission.ts';

/** The gate's answer: declared in core, named here too since every caller of the gate handles one. */
export type { CallAnswer } from '../core/call-answer.ts';

export interface ToolCallsOptions extends CallChecks, CallExecution, CallAllowanceOptions {
  keys: KeyLookup;
  approvals: ApprovalStore;
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
  private readonly allowance: CallAllowance;
  private readonly reads: ReadAdmission;
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
    this.allowance = new CallAllowance(options, this.now, (error) => this.errorAnswer(error));
    this.reads = new ReadAdmission({
      checks: options,
      allowance: this.allowance,
      meter,
      keyLive: (key) => this.keyLive(key),
      now: this.now,
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
    this.reads.stopAll();
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
      await this.allowance.take(key, admitted.perMinute, usesProcessTime);
      if (key.quota !== undefined || admitted.needsApproval)
        usageId = this.allowance.openRecord(key, identity, usesProcessTime);
    } catch (error) {
      return this.allowance.refused(identity, error);
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

  /** Admits a read that stays open (a log stream) as one call of `tool` with `args` (see ReadAdmission). */
  admitRead(request: ReadRequest): Promise<AdmittedRead> {
    return this.reads.admit(request);
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

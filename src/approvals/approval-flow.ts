// An approval's life: opened for a call that needs one (its key notified), waited on, decided, expired on time.
import { jsonAnswer, byteLength, type CallAnswer } from '../core/call-answer.ts';
import { noEgress, type EgressFetch } from '../core/egress-fetch.ts';
import { ToolError } from '../core/errors.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import { waitFor } from '../processes/process-events.ts';
import { concluded, finalAnswer } from './approval-answers.ts';
import { deliverNotice } from './approval-notifier.ts';
import { publicApproval, type Approval, type ApprovalStore, type PendingCall } from './approval-store.ts';

/** The longest a caller may wait for an approval decision. */
export const MAX_WAIT_MS = 60_000;

/** How a usage record ends, as the approval flow closes the one a call reserved. */
export interface RecordClosing {
  outcome: string;
  bytesOut: number;
  durationMs: number;
}

export interface ApprovalFlowParts {
  approvals: ApprovalStore;
  keys: KeyLookup;
  /** How long an approval may stay pending before it is rejected as `expired`. */
  ttlMs: number;
  now: () => number;
  log: (message: string, error?: unknown) => void;
  /** What notices go out through: the home's egress guard (without one, no notice is sent). */
  egress?: EgressFetch;
  /** Closes the record a call reserved, in the approval's own transaction: the call will not run. */
  closeRecord: (usageId: number, closing: RecordClosing) => void;
}

export class ApprovalFlow {
  private readonly decided = new Map<string, Set<() => void>>();
  /** Whoever follows every approval's changes (the approvals stream), told after each change commits. */
  private readonly watchers = new Set<{ listener: (approval: Approval) => void }>();
  private expiryTimer: ReturnType<typeof setTimeout> | undefined;
  private expiryAt = Infinity;

  constructor(private readonly parts: ApprovalFlowParts) {}

  /** Opens a pending approval for an admitted call (`inTransaction` runs in its transaction) and notifies the key's URL. */
  open(key: ApiKey, call: PendingCall, inTransaction: (approval: Approval) => void): Approval {
    const approval = this.parts.approvals.create({ ...call, ttlMs: this.parts.ttlMs }, inTransaction);
    this.scheduleExpiry(Date.parse(approval.expiresAt));
    this.notify(key, approval);
    this.tellWatchers(approval);
    return approval;
  }

  /** The call's answer: its outcome once concluded within `waitMs`, else 202 with the pending approval. */
  async answer(approval: Approval, waitMs: number | undefined): Promise<CallAnswer> {
    if (waitMs === undefined || waitMs <= 0) return jsonAnswer(202, { approval: publicApproval(approval) });
    const { approvals } = this.parts;
    const settled = await waitFor(
      (notice) => this.onDecided(approval.id, notice),
      () => concluded(approvals.get(approval.id)),
      () => approvals.get(approval.id)!,
      Math.min(waitMs, MAX_WAIT_MS),
    );
    if (concluded(settled)) return finalAnswer(settled);
    return jsonAnswer(202, { approval: publicApproval(settled) });
  }

  /** An approval the key may see: its own calls, or (approvers, admins) those of its workspaces. */
  get(key: ApiKey, id: string): Approval {
    this.expire();
    const approval = this.parts.approvals.get(id);
    if (!approval || !maySee(key, approval))
      throw new ToolError('not_found', `Approval ${id} does not exist.`, { approvalId: id });
    return approval;
  }

  list(key: ApiKey, status: Approval['status'] | undefined, limit: number): Approval[] {
    this.expire();
    return key.role === 'agent'
      ? this.parts.approvals.list({ status, keyId: key.id, limit })
      : this.parts.approvals.list({ status, workspaces: key.workspaces, limit });
  }

  /** An approver's decision; approving runs the call once (by `run`, which records its outcome) before answering. */
  async decide(
    key: ApiKey,
    id: string,
    decision: 'approve' | 'reject',
    reason: string | undefined,
    run: (approval: Approval) => Promise<Approval>,
  ): Promise<Approval> {
    if (key.role !== 'approver' && key.role !== 'admin') {
      throw new ToolError(
        'forbidden',
        `Deciding approvals needs a key with the role approver or admin; this key has the role ${key.role}.`,
      );
    }
    const approval = this.get(key, id);
    const { approvals } = this.parts;
    if (decision === 'reject') {
      const rejected = approvals.decide(approval.id, 'reject', key.id, reason, (decided) => this.closeUnrun(decided));
      this.announce(id);
      return rejected;
    }
    approvals.decide(approval.id, 'approve', key.id, reason);
    this.announce(id);
    const done = await run(approval);
    this.announce(id);
    return done;
  }

  /** Rejects pending approvals whose time is up (as `expired`) and wakes whoever waits on them. */
  expire(): void {
    const { approvals } = this.parts;
    const expired = approvals.expireDue((approval) => this.closeUnrun(approval));
    for (const approval of expired) this.announce(approval.id);
    const next = approvals.nextExpiry();
    if (next !== undefined) this.scheduleExpiry(next);
  }

  /** Approved calls that were running when the server stopped end as `unavailable`, with their records. */
  concludeInterrupted(): void {
    const { approvals } = this.parts;
    for (const approval of approvals.interrupted()) {
      const error = {
        code: 'unavailable' as const,
        message:
          'The server stopped while this approved call ran; it may or may not have happened. Check the workspace before retrying.',
      };
      approvals.complete(approval.id, { error }, () =>
        this.parts.closeRecord(approval.usageId, { outcome: 'interrupted', bytesOut: 0, durationMs: 0 }),
      );
    }
  }

  stop(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
  }

  private closeUnrun(approval: Approval): void {
    this.parts.closeRecord(approval.usageId, {
      outcome: 'approval_rejected',
      bytesOut: byteLength(finalAnswer(approval).json),
      durationMs: 0,
    });
  }

  private notify(key: ApiKey, approval: Approval): void {
    const url = key.notifyUrl;
    if (url === undefined) return;
    void (async () => {
      const secret = await this.parts.keys.notifySecret(key.id);
      if (secret === undefined) return;
      const body = JSON.stringify({ type: 'approval.created', approval: publicApproval(approval) });
      await deliverNotice(
        { url, secret, body, deliveryId: approval.id },
        { fetch: this.parts.egress ?? noEgress, onFailure: (message) => this.parts.log(message) },
      );
    })().catch((error: unknown) => this.parts.log(`could not notify ${url} of approval ${approval.id}`, error));
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

  /** Calls `listener` with each approval after it is created or changes (decided, run, expired); answers how to stop. */
  watch(listener: (approval: Approval) => void): () => void {
    const entry = { listener };
    this.watchers.add(entry);
    return () => {
      this.watchers.delete(entry);
    };
  }

  /** How many watch the approvals: what tests read to see a closed stream let go. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  private announce(id: string): void {
    for (const notice of [...(this.decided.get(id) ?? [])]) notice();
    if (this.watchers.size === 0) return;
    const approval = this.parts.approvals.get(id);
    if (approval) this.tellWatchers(approval);
  }

  private tellWatchers(approval: Approval): void {
    for (const entry of [...this.watchers]) {
      try {
        entry.listener(approval);
      } catch (error) {
        // The change is committed: a watcher's failure must not turn it into an error answer.
        this.parts.log(`a watcher of approval ${approval.id} failed`, error);
      }
    }
  }

  private scheduleExpiry(at: number): void {
    if (at >= this.expiryAt && this.expiryTimer !== undefined) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = at;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = undefined;
        this.expiryAt = Infinity;
        this.expire();
      },
      Math.min(Math.max(0, at - this.parts.now()) + 5, 2_147_483_647),
    );
    this.expiryTimer.unref?.();
  }
}

/** Whether `key` sees `approval`, in a listing or a stream: an agent its own calls, approvers and admins those of their workspaces. */
export function maySee(key: ApiKey, approval: Pick<Approval, 'keyId' | 'workspace'>): boolean {
  return key.role === 'agent' ? approval.keyId === key.id : canSeeWorkspace(key, approval.workspace);
}

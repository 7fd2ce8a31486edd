// Approvals kept durably: a pending call, its one decision, and the outcome of running it.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ApprovalStatus } from '../contract/http-requests.ts';
import type { StoredApproval } from '../contract/store-records.ts';

export type { ApprovalStatus };

export const STOP_REASON = 'BLOCKED_BY_APPROVAL';
export const REJECTED_PREFIX = '[approval-rejected]';

/** A call waiting for an approver: what it would run, and the usage record reserved for it. */
export type PendingCall = Pick<
  Approval,
  'tool' | 'action' | 'arguments' | 'workspace' | 'keyId' | 'keyName' | 'usageId' | 'bytesIn'
>;

/** A pending call, its one decision and the outcome of running it; the record workspace objects also send in listings. */
export type Approval = StoredApproval;

type ApprovalRow = {
  id: string;
  status: ApprovalStatus;
  tool: string;
  action: string | null;
  arguments: string;
  workspace: string;
  key_id: string;
  key_name: string | null;
  created_at: string;
  expires_at: number;
  decided_at: string | null;
  decided_by: string | null;
  reason: string | null;
  result: string | null;
  error: string | null;
  usage_id: number;
  bytes_in: number;
};

export class ApprovalStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    /** A new approval's id; a home that routes approvals by workspace may spell the workspace into it. */
    private readonly newId: (workspace: string) => string = () => `apr_${crypto.randomUUID().replaceAll('-', '')}`,
  ) {
    db.script(`
      CREATE TABLE IF NOT EXISTS approvals (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        tool TEXT NOT NULL,
        action TEXT,
        arguments TEXT NOT NULL,
        workspace TEXT NOT NULL,
        key_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at TEXT,
        decided_by TEXT,
        reason TEXT,
        result TEXT,
        error TEXT,
        usage_id INTEGER NOT NULL,
        bytes_in INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (status, expires_at);
      CREATE INDEX IF NOT EXISTS approvals_workspace ON approvals (workspace, created_at);
      CREATE INDEX IF NOT EXISTS approvals_key ON approvals (key_id, created_at);
    `);
    // A column added after the first release; a data dir from before gains it here.
    try {
      db.script('ALTER TABLE approvals ADD COLUMN key_name TEXT');
    } catch (error) {
      if (!/duplicate column/i.test((error as Error).message)) throw error;
    }
  }

  /** Records a pending approval; `inTransaction` runs in the same transaction. */
  create(input: PendingCall & { ttlMs: number }, inTransaction?: (approval: Approval) => void): Approval {
    const id = this.newId(input.workspace);
    const now = this.now();
    return this.db.transaction(() => {
      const [row] = this.db.query<ApprovalRow>(
        `INSERT INTO approvals (id, status, tool, action, arguments, workspace, key_id, key_name, created_at, expires_at, usage_id, bytes_in)
       VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        id,
        input.tool,
        input.action ?? null,
        JSON.stringify(input.arguments),
        input.workspace,
        input.keyId,
        input.keyName ?? null,
        new Date(now).toISOString(),
        now + input.ttlMs,
        input.usageId,
        input.bytesIn,
      );
      const approval = toApproval(row!);
      inTransaction?.(approval);
      return approval;
    });
  }

  get(id: string): Approval | undefined {
    const row = this.db.query<ApprovalRow>('SELECT * FROM approvals WHERE id = ?', id)[0];
    return row && toApproval(row);
  }

  /** Newest first, at most `limit`: of one key, or of the given workspaces (`*` for all). */
  list(filter: { status?: ApprovalStatus; keyId?: string; workspaces?: string[]; limit: number }): Approval[] {
    const where: string[] = [];
    const params: (string | number)[] = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.keyId !== undefined) {
      where.push('key_id = ?');
      params.push(filter.keyId);
    }
    if (filter.workspaces !== undefined && !filter.workspaces.includes('*')) {
      if (filter.workspaces.length === 0) return [];
      where.push(`workspace IN (${filter.workspaces.map(() => '?').join(', ')})`);
      params.push(...filter.workspaces);
    }
    const sql = `SELECT * FROM approvals ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`;
    return this.db.query<ApprovalRow>(sql, ...params, filter.limit).map(toApproval);
  }

  /**
   * Decides a pending approval; only the first decision wins (`conflict` for later ones), so an
   * approved call runs once however often it is approved. `inTransaction` runs with the decision.
   */
  decide(
    id: string,
    decision: 'approve' | 'reject',
    by: string,
    reason: string | undefined,
    inTransaction?: (approval: Approval) => void,
  ): Approval {
    return this.db.transaction(() => {
      const current = this.get(id);
      if (!current) throw new ToolError('not_found', `Approval ${id} does not exist.`, { approvalId: id });
      if (current.status !== 'pending') {
        throw new ToolError(
          'conflict',
          `Approval ${id} was already decided (${current.status}); a decision cannot be changed.`,
          { approvalId: id, status: current.status },
        );
      }
      const status: ApprovalStatus = decision === 'approve' ? 'approved' : 'rejected';
      const error = status === 'rejected' ? rejection(reason) : null;
      const [row] = this.db.query<ApprovalRow>(
        `UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?, reason = ?, error = ? WHERE id = ? AND status = 'pending' RETURNING *`,
        status,
        new Date(this.now()).toISOString(),
        by,
        reason ?? null,
        error === null ? null : JSON.stringify(error),
        id,
      );
      const decided = toApproval(row!);
      inTransaction?.(decided);
      return decided;
    });
  }

  /** Records what running an approved call gave; `inTransaction` runs with it. */
  complete(
    id: string,
    outcome: { result: unknown } | { error: NonNullable<Approval['error']> },
    inTransaction?: () => void,
  ): Approval {
    return this.db.transaction(() => {
      const [row] = this.db.query<ApprovalRow>(
        `UPDATE approvals SET result = ?, error = ? WHERE id = ? AND status = 'approved' AND result IS NULL AND error IS NULL RETURNING *`,
        'result' in outcome ? JSON.stringify(outcome.result ?? null) : null,
        'error' in outcome ? JSON.stringify(outcome.error) : null,
        id,
      );
      if (row) inTransaction?.();
      return row ? toApproval(row) : this.get(id)!;
    });
  }

  /** Pending approvals past their time, now rejected with the reason `expired`. */
  expireDue(inTransaction: (approval: Approval) => void): Approval[] {
    const now = this.now();
    return this.db.transaction(() => {
      const rows = this.db.query<ApprovalRow>(
        `UPDATE approvals SET status = 'rejected', decided_at = ?, reason = 'expired', error = ? WHERE status = 'pending' AND expires_at <= ? RETURNING *`,
        new Date(now).toISOString(),
        JSON.stringify(rejection('expired')),
        now,
      );
      const expired = rows.map(toApproval);
      for (const approval of expired) inTransaction(approval);
      return expired;
    });
  }

  /** Approved calls that were running when the server stopped: they may or may not have happened. */
  interrupted(): Approval[] {
    return this.db
      .query<ApprovalRow>(`SELECT * FROM approvals WHERE status = 'approved' AND result IS NULL AND error IS NULL`)
      .map(toApproval);
  }

  /** The soonest time a pending approval expires, if any is pending. */
  nextExpiry(): number | undefined {
    return (
      this.db.query<{ at: number | null }>(`SELECT MIN(expires_at) AS at FROM approvals WHERE status = 'pending'`)[0]
        ?.at ?? undefined
    );
  }
}

function rejection(reason: string | undefined): NonNullable<Approval['error']> {
  return { code: 'approval_rejected', message: `${REJECTED_PREFIX} ${reason ?? 'The approver rejected this call.'}` };
}

/** The approval as answers show it (docs/api.md's fields, and the outcome once there is one). */
export function publicApproval(approval: Approval): Record<string, unknown> {
  return {
    id: approval.id,
    status: approval.status,
    tool: approval.tool,
    ...(approval.action === undefined ? {} : { action: approval.action }),
    arguments: approval.arguments,
    workspace: approval.workspace,
    keyId: approval.keyId,
    ...(approval.keyName === undefined ? {} : { keyName: approval.keyName }),
    createdAt: approval.createdAt,
    expiresAt: approval.expiresAt,
    ...(approval.decidedAt === undefined
      ? {}
      : { decidedAt: approval.decidedAt, decidedBy: approval.decidedBy ?? null, reason: approval.reason ?? null }),
    ...(approval.status === 'approved' && approval.error === undefined && approval.result !== undefined
      ? { result: approval.result }
      : {}),
    ...(approval.error === undefined ? {} : { error: approval.error }),
    ...(approval.status === 'rejected' ? { stopReason: STOP_REASON } : {}),
  };
}

function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    status: row.status,
    tool: row.tool,
    action: row.action ?? undefined,
    arguments: JSON.parse(row.arguments) as unknown,
    workspace: row.workspace,
    keyId: row.key_id,
    keyName: row.key_name ?? undefined,
    createdAt: row.created_at,
    expiresAt: new Date(row.expires_at).toISOString(),
    decidedAt: row.decided_at ?? undefined,
    decidedBy: row.decided_by ?? undefined,
    reason: row.reason ?? undefined,
    result: row.result === null ? undefined : (JSON.parse(row.result) as unknown),
    error: row.error === null ? undefined : (JSON.parse(row.error) as Approval['error']),
    usageId: row.usage_id,
    bytesIn: row.bytes_in,
  };
}

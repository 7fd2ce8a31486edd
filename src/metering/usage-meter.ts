// Usage records: exactly one per tool call, the quota check that admits a call, and the process seconds they count.
import { checkQuota, periodStart } from './quota-rules.ts';
import type { ApiKey, Quota } from '../keys/key-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { consoleLog, type Log } from '../core/log.ts';
import type { UsageRow } from '../contract/http-answers.ts';
import type { UsageGroup } from '../contract/http-requests.ts';
import type { UsageQuery } from '../contract/object-calls.ts';
import { GroupCommit } from './group-commit.ts';
import { applyUsageSchema } from './usage-schema.ts';
import { usageSummary } from './usage-summary.ts';
import {
  countProcessSeconds,
  openProcesses,
  openProcessWorkspace,
  type ProcessSeconds,
} from './usage-process-seconds.ts';

export interface CallIdentity {
  keyId: string;
  workspace: string;
  tool: string;
  /** bash's action. */
  action: string | undefined;
  bytesIn: number;
  /** When the call arrived (ms since the epoch). */
  startedAt: number;
}

export interface CallOutcome {
  /** `ok`, or the error code the call ended with. */
  outcome: string;
  bytesOut: number;
  durationMs: number;
  processSeconds?: number;
  /** A started bash process whose run time is added when it ends. */
  processId?: string;
}

export type { UsageGroup, UsageRow };

/** Which calls a usage summary adds up: a time range, and optionally one key's calls and the workspaces of a scope. */
export type { UsageQuery };

/** The outcome of calls that were cut off by a server stop before they answered. */
export const INTERRUPTED = 'interrupted';

interface Settling {
  call: CallIdentity;
  outcome: CallOutcome;
  billable: boolean;
  /** Set when the call's effect may have written its record already (see recordEffect). */
  effectKey: string | undefined;
}

export { DEFERRED_RECORD_MS } from './group-commit.ts';

export class UsageMeter {
  /** Records waiting for the next group commit. */
  private readonly settling = new GroupCommit<Settling>((batch) => this.commit(batch));

  constructor(
    private readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
    private readonly log: Log = consoleLog,
  ) {
    applyUsageSchema(db);
  }

  /**
   * Calls still open from before a restart that wait for no approval were cut off: they get the
   * outcome `ok` when their effect committed, else `interrupted`. Each keeps its one record.
   */
  closeInterrupted(): number {
    const rows = this.db.query<{ id: number }>(
      `UPDATE usage SET outcome = CASE WHEN effect = 1 THEN 'ok' ELSE '${INTERRUPTED}' END
       WHERE outcome IS NULL AND approval_id IS NULL RETURNING id`,
    );
    return rows.length;
  }

  /**
   * Records a finished call that holds no record yet: refused before admission (not billable),
   * or run without needing one ahead (no quota, no approval). Calls that end together share one
   * transaction (a group commit), so a record costs a fraction of a commit. Resolves once the
   * record is committed: at the next turn of the event loop, or, for a call that changed nothing
   * (`deferrable`: no effect landed, no process time), within DEFERRED_RECORD_MS, and such a call
   * need not wait for it. A crash may lose only those deferred records; a call whose effect landed
   * has its record in the effect's transaction already (recordEffect).
   */
  settle(
    call: CallIdentity,
    outcome: CallOutcome,
    options: { billable: boolean; effectKey?: string; deferrable?: boolean },
  ): Promise<void> {
    return this.settling.add(
      { call, outcome, billable: options.billable, effectKey: options.effectKey },
      options.deferrable === true,
    );
  }

  /**
   * For a call without a record ahead: writes its record, open, inside the transaction that
   * commits the call's effect, so after a crash the record exists exactly when the effect does.
   */
  recordEffect(call: CallIdentity, effectKey: string): void {
    this.db.query(
      `INSERT INTO usage (key_id, workspace, tool, action, outcome, billable, effect, bytes_in, started_at, call_key)
       VALUES (?, ?, ?, ?, NULL, 1, 1, ?, ?, ?) ON CONFLICT DO NOTHING`,
      call.keyId,
      call.workspace,
      call.tool,
      call.action ?? null,
      call.bytesIn,
      call.startedAt,
      effectKey,
    );
  }

  /**
   * Commits every record waiting to settle, in one transaction. Whatever reads records (a
   * summary, a quota check) flushes first, so it sees every call that has answered; so does a
   * server that stops.
   */
  flush(): void {
    this.settling.flush();
  }

  private commit(batch: Settling[]): void {
    try {
      this.db.transaction(() => {
        for (const item of batch) this.write(item);
      });
    } catch (error) {
      // The calls have run; losing their records is reported loudly but does not fail them.
      this.log(`could not record the usage of ${batch.length} calls`, error);
    }
  }

  private write({ call, outcome, billable, effectKey }: Settling): void {
    const processOpen = outcome.processId === undefined ? 0 : 1;
    if (effectKey !== undefined) {
      // The effect's transaction wrote the record unless it rolled back (then it is written here).
      const updated = this.db.query(
        `UPDATE usage SET outcome = ?, bytes_out = ?, duration_ms = ?, process_seconds = ?, process_id = ?, process_open = ?
         WHERE call_key = ? RETURNING id`,
        outcome.outcome,
        outcome.bytesOut,
        outcome.durationMs,
        outcome.processSeconds ?? 0,
        outcome.processId ?? null,
        processOpen,
        effectKey,
      );
      if (updated.length > 0) return;
    }
    this.db.query(
      `INSERT INTO usage (key_id, workspace, tool, action, outcome, billable, bytes_in, bytes_out, duration_ms, process_seconds, process_id, process_open, started_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      call.keyId,
      call.workspace,
      call.tool,
      call.action ?? null,
      outcome.outcome,
      billable ? 1 : 0,
      call.bytesIn,
      outcome.bytesOut,
      outcome.durationMs,
      outcome.processSeconds ?? 0,
      outcome.processId ?? null,
      processOpen,
      call.startedAt,
    );
  }

  /**
   * Checks the key's quota and, in the same transaction, opens the call's record: concurrent
   * callers are admitted one at a time, so a quota of N admits exactly N. Throws `quota_exceeded`.
   */
  admit(key: Pick<ApiKey, 'id' | 'quota'>, call: CallIdentity, options: { usesProcessTime: boolean }): number {
    // The quota counts every call that has answered, deferred records included.
    if (key.quota) this.flush();
    return this.db.transaction(() => {
      if (key.quota) this.checkQuota(key.id, key.quota, options.usesProcessTime);
      const [row] = this.db.query<{ id: number }>(
        `INSERT INTO usage (key_id, workspace, tool, action, outcome, billable, bytes_in, started_at)
         VALUES (?, ?, ?, ?, NULL, 1, ?, ?) RETURNING id`,
        call.keyId,
        call.workspace,
        call.tool,
        call.action ?? null,
        call.bytesIn,
        call.startedAt,
      );
      return row!.id;
    });
  }

  /** Marks an admitted call's effect as committed; run inside the effect's own transaction. */
  markEffect(id: number): void {
    this.db.query('UPDATE usage SET effect = 1 WHERE id = ?', id);
  }

  /** Ties an open call to the approval it waits for, so a restart leaves it open. */
  awaitApproval(id: number, approvalId: string): void {
    this.db.query('UPDATE usage SET approval_id = ? WHERE id = ?', approvalId, id);
  }

  /** Closes an admitted call with its outcome; a record already closed stays as it is. */
  finish(id: number, outcome: CallOutcome): void {
    this.db.query(
      `UPDATE usage SET outcome = ?, bytes_out = ?, duration_ms = ?, process_seconds = ?, process_id = ?, process_open = ?
       WHERE id = ? AND outcome IS NULL`,
      outcome.outcome,
      outcome.bytesOut,
      outcome.durationMs,
      outcome.processSeconds ?? 0,
      outcome.processId ?? null,
      outcome.processId === undefined ? 0 : 1,
      id,
    );
  }

  /** Started processes whose run time is still to be counted. */
  openProcesses(): { workspace: string; processId: string }[] {
    return openProcesses(this.db);
  }

  /** The workspace of a started process whose run time is still to be counted. */
  openProcessWorkspace(processId: string): string | undefined {
    return openProcessWorkspace(this.db, processId);
  }

  /**
   * Sets an ended process's run time on the call that started it; answers that call with the
   * seconds added since it was last counted (none when already counted).
   */
  processEnded(processId: string, seconds: number): ProcessSeconds[] {
    return countProcessSeconds(this.db, processId, seconds, false);
  }

  /** Sets a running process's run time so far on the call that started it (quotas see it at once); answers as processEnded. */
  processAccrued(processId: string, seconds: number): ProcessSeconds[] {
    return countProcessSeconds(this.db, processId, seconds, true);
  }

  /** Whether the key's processSeconds quota is spent by the calls recorded here. */
  processSecondsSpent(keyId: string, quota: Quota): boolean {
    if (quota.processSeconds === undefined) return false;
    this.flush();
    return this.spent(keyId, quota).seconds >= quota.processSeconds;
  }

  /** Totals per group of the calls started in [from, to), of one key or (undefined) every key, on the workspaces of the scope (undefined: all). */
  summary(query: UsageQuery): UsageRow[] {
    this.flush();
    return usageSummary(this.db, query);
  }

  private checkQuota(keyId: string, quota: Quota, usesProcessTime: boolean): void {
    checkQuota(quota, this.spent(keyId, quota), usesProcessTime, this.now());
  }

  private spent(keyId: string, quota: Quota): { calls: number; seconds: number } {
    const since = periodStart(quota.period, this.now());
    const [spent] = this.db.query<{ calls: number; seconds: number | null }>(
      'SELECT COUNT(*) AS calls, SUM(process_seconds) AS seconds FROM usage WHERE key_id = ? AND billable = 1 AND started_at >= ?',
      keyId,
      since,
    );
    return { calls: spent!.calls, seconds: spent!.seconds ?? 0 };
  }
}

// What a call takes from its key before it runs: rate limit, quota, its record opened ahead (or written if refused).
import { byteLength, type CallAnswer } from '../core/call-answer.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { CallAdmission } from '../metering/call-admission.ts';
import type { QuotaLedger } from '../metering/quota-ledger.ts';
import type { CallLimiter } from '../metering/rate-limiter.ts';
import type { CallIdentity, UsageMeter } from '../metering/usage-meter.ts';
import { outcomeOf } from './call-execution.ts';

export interface CallAllowanceOptions {
  meter: UsageMeter;
  rateLimiter: CallLimiter;
  quotaLedger?: QuotaLedger;
  /** Where the rate limit and the ledger's quota are taken in one step (instead of rateLimiter, then quotaLedger). */
  admission?: CallAdmission;
}

export class CallAllowance {
  constructor(
    private readonly options: CallAllowanceOptions,
    private readonly now: () => number,
    /** The answer a failure gives (an internal one logged). */
    private readonly errorAnswer: (error: unknown) => CallAnswer,
  ) {}

  /**
   * Takes the call from the key's rate limit and, when the home keeps a ledger apart, admits it
   * against the key's quota: in one step where the home has one (`admission`), else one after the other.
   */
  async take(key: ApiKey, perMinute: number, usesProcessTime: boolean): Promise<void> {
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
  openRecord(key: ApiKey, identity: CallIdentity, usesProcessTime: boolean): number {
    return this.options.meter.admit(this.options.quotaLedger ? { id: key.id, quota: undefined } : key, identity, {
      usesProcessTime,
    });
  }

  /** The answer to a call refused before it ran, whose record (not billable) it settles. */
  refused(identity: CallIdentity, error: unknown): CallAnswer {
    const answer = this.errorAnswer(error);
    // Refused before it ran, so it changed nothing: its record may follow the answer.
    void this.options.meter.settle(
      identity,
      { outcome: outcomeOf(error), bytesOut: byteLength(answer.json), durationMs: this.now() - identity.startedAt },
      { billable: false, deferrable: true },
    );
    return answer;
  }
}

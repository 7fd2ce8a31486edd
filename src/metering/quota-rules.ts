// Quota rules shared by both homes: the calendar period a quota counts in, and the check that
// refuses a call once a key has spent its calls or process seconds for that period.
import { ToolError } from '../core/errors.ts';
import type { Quota } from '../keys/key-store.ts';

/**
 * Throws `quota_exceeded` when what a key spent this period leaves no room for one more call;
 * spent process seconds stop only calls that use process time.
 */
export function checkQuota(
  quota: Quota,
  spent: { calls: number; seconds: number },
  usesProcessTime: boolean,
  now: number,
): void {
  const resetsAt = new Date(periodEnd(quota.period, now)).toISOString();
  if (quota.calls !== undefined && spent.calls >= quota.calls) {
    throw new ToolError(
      'quota_exceeded',
      `This key's quota of ${quota.calls} calls a ${quota.period} is spent; it renews at ${resetsAt}.`,
      {
        quota: 'calls',
        limit: quota.calls,
        used: spent.calls,
        resetsAt,
      },
    );
  }
  if (usesProcessTime && quota.processSeconds !== undefined && spent.seconds >= quota.processSeconds) {
    throw new ToolError(
      'quota_exceeded',
      `This key's quota of ${quota.processSeconds} process seconds a ${quota.period} is spent; it renews at ${resetsAt}.`,
      {
        quota: 'processSeconds',
        limit: quota.processSeconds,
        used: spent.seconds,
        resetsAt,
      },
    );
  }
}

/** The start of the calendar day or month (UTC) holding `at`. */
export function periodStart(period: Quota['period'], at: number): number {
  const date = new Date(at);
  return period === 'day'
    ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
    : Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function periodEnd(period: Quota['period'], at: number): number {
  const date = new Date(at);
  return period === 'day'
    ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)
    : Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

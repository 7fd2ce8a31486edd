// A per-key rate limit: a token bucket refilled continuously, so bursts up to the limit pass.
import { ToolError } from '../core/errors.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets not touched for this long are full again and can be forgotten. */
const IDLE_MS = 60_000;
const MAX_BUCKETS = 100_000;

/** Takes one call from a key's rate limit, or throws `rate_limited`. */
export interface CallLimiter {
  take(keyId: string, perMinute: number): void | Promise<void>;
}

export class RateLimiter implements CallLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes one call from the key's allowance of `perMinute`; throws `rate_limited` with the seconds to wait. */
  take(keyId: string, perMinute: number): void {
    const now = this.now();
    const perMs = perMinute / 60_000;
    const bucket = this.buckets.get(keyId) ?? { tokens: perMinute, at: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(keyId, bucket);
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
      throw new ToolError(
        'rate_limited',
        `This key may make ${perMinute} tool calls a minute; wait ${retryAfterSeconds} s and retry.`,
        {
          limitPerMinute: perMinute,
          retryAfterSeconds,
        },
      );
    }
    bucket.tokens -= 1;
    if (this.buckets.size >= MAX_BUCKETS) this.forgetIdle(now);
    this.buckets.set(keyId, bucket);
  }

  private forgetIdle(now: number): void {
    for (const [key, bucket] of this.buckets) if (now - bucket.at > IDLE_MS) this.buckets.delete(key);
  }
}

// The per-key rate limit: bursts up to the limit, a steady refill, and a truthful Retry-After.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import { RateLimiter } from '../../src/metering/rate-limiter.ts';

function refusal(action: () => void): ToolError | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error as ToolError;
  }
}

describe('RateLimiter', () => {
  it('admits a burst of the limit, then refuses with the seconds until the next call is allowed', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(() => now);
    for (let i = 0; i < 60; i += 1) expect(refusal(() => limiter.take('k', 60))).toBeUndefined();
    const refused = refusal(() => limiter.take('k', 60));
    expect(refused?.code).toBe('rate_limited');
    expect(refused?.details).toMatchObject({ retryAfterSeconds: 1, limitPerMinute: 60 });
    now += 999;
    expect(refusal(() => limiter.take('k', 60))?.code).toBe('rate_limited');
    now += 2;
    expect(refusal(() => limiter.take('k', 60))).toBeUndefined();
  });

  it('keeps keys apart and tells a slow limit its longer wait', () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    limiter.take('slow', 2);
    limiter.take('slow', 2);
    expect(refusal(() => limiter.take('slow', 2))?.details?.retryAfterSeconds).toBe(30);
    expect(refusal(() => limiter.take('other', 2))).toBeUndefined();
    now += 30_000;
    expect(refusal(() => limiter.take('slow', 2))).toBeUndefined();
  });
});

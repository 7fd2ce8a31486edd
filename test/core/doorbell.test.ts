// The doorbell a stream waits on between reads: no ring lost, and a keep-alive exactly when a wait has been quiet for its idle time.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Doorbell, type DoorbellWait } from '../../src/core/doorbell.ts';

/** A wait's outcome once it has ended, or 'waiting'. */
function track(wait: Promise<DoorbellWait>): { get: () => DoorbellWait | 'waiting' } {
  let outcome: DoorbellWait | 'waiting' = 'waiting';
  void wait.then((how) => (outcome = how));
  return { get: () => outcome };
}

describe('a doorbell', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('remembers a ring until it is cleared, so a notice during a read is not lost', async () => {
    const bell = new Doorbell();
    const signal = new AbortController().signal;
    bell.ring();
    expect(await bell.wait(1000, signal)).toBe('rung');
    bell.clear();
    const wait = track(bell.wait(1000, signal));
    await vi.advanceTimersByTimeAsync(10);
    expect(wait.get()).toBe('waiting');
    bell.ring();
    await vi.advanceTimersByTimeAsync(0);
    expect(wait.get()).toBe('rung');
  });

  it('goes idle a full idle time after each wait began, however many rings came before it', async () => {
    const bell = new Doorbell();
    const signal = new AbortController().signal;
    for (let ring = 0; ring < 5; ring += 1) {
      bell.clear();
      const wait = track(bell.wait(500, signal));
      await vi.advanceTimersByTimeAsync(300);
      bell.ring();
      await vi.advanceTimersByTimeAsync(0);
      expect(wait.get()).toBe('rung');
    }
    bell.clear();
    const quiet = track(bell.wait(500, signal));
    await vi.advanceTimersByTimeAsync(499);
    expect(quiet.get()).toBe('waiting');
    await vi.advanceTimersByTimeAsync(1);
    expect(quiet.get()).toBe('idle');
  });

  it('ends a wait when its signal aborts, and leaves no timer behind', async () => {
    const bell = new Doorbell();
    const reader = new AbortController();
    const wait = track(bell.wait(500, reader.signal));
    reader.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(wait.get()).toBe('closed');
    expect(vi.getTimerCount()).toBe(0);
    expect(await bell.wait(500, reader.signal)).toBe('closed');
  });
});

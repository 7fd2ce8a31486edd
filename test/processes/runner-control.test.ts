// The runner's control request: a heartbeat that waits for stdin or a stop and answers as soon as one is written.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isToolError } from '../../src/core/errors.ts';
import { fence, memoryStore, runningProcess } from './process-fixtures.ts';

beforeEach(() => {
  // Only the wait's timers are faked: an answer that comes without advancing them came from the event.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The promise's outcome once pending callbacks have run, or 'pending'. */
async function outcome<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown } | 'pending'> {
  let settled: { value: T } | { error: unknown } | 'pending' = 'pending';
  promise.then(
    (value) => (settled = { value }),
    (error: unknown) => (settled = { error }),
  );
  await vi.advanceTimersByTimeAsync(0);
  return settled;
}

function staleCode(result: Awaited<ReturnType<typeof outcome>>): string | undefined {
  if (result === 'pending' || !('error' in result)) return undefined;
  return isToolError(result.error) ? result.error.code : 'not a ToolError';
}

describe('a waiting heartbeat', () => {
  it('answers at once when stdin is already pending', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    store.writeStdin('ws', record.id, 'early\n', false);
    const answer = await outcome(store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 }));
    expect(answer).toEqual({ value: { stdin: [{ seq: 1, data: 'early\n', eof: false }], stop: null } });
  });

  it('waits, and answers as soon as stdin is written; output alone does not answer it', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    const waiting = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 });
    await vi.advanceTimersByTimeAsync(1000);
    store.appendOutput(record.id, fence(token), 'some output\n', 0);
    expect(await outcome(waiting)).toBe('pending');
    store.writeStdin('ws', record.id, 'hello\n', true);
    expect(await outcome(waiting)).toEqual({ value: { stdin: [{ seq: 1, data: 'hello\n', eof: true }], stop: null } });
  });

  it('hands stdin out again until it is acknowledged, so a lost reply loses nothing', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    const lost = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 });
    store.writeStdin('ws', record.id, 'one\n', false);
    await lost;
    store.writeStdin('ws', record.id, 'two\n', false);
    const again = await outcome(store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 }));
    expect(again).toEqual({
      value: {
        stdin: [
          { seq: 1, data: 'one\n', eof: false },
          { seq: 2, data: 'two\n', eof: false },
        ],
        stop: null,
      },
    });
    const acknowledged = await outcome(store.control(record.id, fence(token), { stdinAck: 2, waitMs: 5000 }));
    expect(acknowledged).toBe('pending');
  });

  it('answers a stop at once; a runner that has the stop waits again, and is told of it on every answer', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    const waiting = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 });
    store.requestStop('ws', record.id, 250);
    expect(await outcome(waiting)).toEqual({ value: { stdin: [], stop: { graceMs: 250 } } });
    const acknowledged = store.control(record.id, fence(token), { stdinAck: 0, stopAck: true, waitMs: 5000 });
    expect(await outcome(acknowledged)).toBe('pending');
    store.writeStdin('ws', record.id, 'late\n', false);
    expect(await outcome(acknowledged)).toEqual({
      value: { stdin: [{ seq: 1, data: 'late\n', eof: false }], stop: { graceMs: 250 } },
    });
  });

  it('answers an empty reply when its wait is up, and waits at most half a lease', async () => {
    const { store } = memoryStore({ leaseMs: 10_000 });
    const { record, token } = runningProcess(store);
    const waiting = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 30_000 });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(await outcome(waiting)).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome(waiting)).toEqual({ value: { stdin: [], stop: null } });
  });

  it('renews the lease when asked, so a runner holding one open keeps its job', async () => {
    const { store, clock } = memoryStore({ leaseMs: 10_000 });
    const { record, token } = runningProcess(store);
    for (let round = 0; round < 5; round += 1) {
      const waiting = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5_000 });
      clock.advance(5_000);
      await vi.advanceTimersByTimeAsync(5_000);
      await waiting;
      expect(store.sweep()).toEqual([]);
    }
    expect(store.get('ws', record.id)?.status).toBe('running');
  });

  it('answers as a stale lease once the job ends, is lost or its workspace is deleted', async () => {
    const { store, clock } = memoryStore({ leaseMs: 10_000 });
    const finished = runningProcess(store);
    const onFinished = store.control(finished.record.id, fence(finished.token), { waitMs: 5000 });
    store.finish(finished.record.id, fence(finished.token), { exitCode: 0, status: 'exited' });
    expect(staleCode(await outcome(onFinished))).toBe('conflict');

    const lost = runningProcess(store);
    clock.advance(10_001);
    const onLost = store.control(lost.record.id, fence(lost.token), { waitMs: 5000 });
    // The request renewed the lease; the sweeper finds it expired only after another lease.
    clock.advance(10_001);
    expect(store.sweep()).toEqual([lost.record.id]);
    expect(staleCode(await outcome(onLost))).toBe('conflict');

    const deleted = runningProcess(store);
    const onDeleted = store.control(deleted.record.id, fence(deleted.token), { waitMs: 5000 });
    store.deleteWorkspace('ws');
    expect(staleCode(await outcome(onDeleted))).toBe('conflict');
  });

  it('ends the wait when its request is aborted, answering nothing new', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    const abort = new AbortController();
    const waiting = store.control(record.id, fence(token), { stdinAck: 0, waitMs: 5000 }, abort.signal);
    abort.abort();
    expect(await outcome(waiting)).toEqual({ value: { stdin: [], stop: null } });
    // The stdin written after it is handed to the runner's next request.
    store.writeStdin('ws', record.id, 'next\n', false);
    expect(store.heartbeat(record.id, fence(token), 0).stdin).toEqual([{ seq: 1, data: 'next\n', eof: false }]);
  });

  it('without waitMs answers at once, as a heartbeat does', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    expect(await outcome(store.control(record.id, fence(token), { stdinAck: 0 }))).toEqual({
      value: { stdin: [], stop: null },
    });
  });
});

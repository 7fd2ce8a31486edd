// The job queue: leases, fencing tokens, heartbeats, the sweeper, and at-least-once delivery.
import { describe, expect, it, vi } from 'vitest';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { SqlDatabase, SqlRow, SqlValue } from '../../src/storage/sql-database.ts';
import { ProcessStore } from '../../src/processes/process-store.ts';
import {
  RUNNER,
  expectStale,
  fence,
  memoryStore,
  newProcess,
  runningProcess,
  tempDatabaseFile,
} from './process-fixtures.ts';

const LEASE_MS = 15_000;

describe('leasing', () => {
  it('leases the oldest queued job with a fresh token and leaves the process queued until started', () => {
    const { store } = memoryStore();
    const first = store.create(newProcess({ command: 'first' }));
    const second = store.create(newProcess({ command: 'second', workspace: 'other' }));
    const job = store.lease('runner-a', RUNNER);
    expect(job).toMatchObject({
      processId: first.id,
      leaseMs: LEASE_MS,
      record: { id: first.id, status: 'queued', command: 'first' },
    });
    expect(store.get('ws', first.id)?.status).toBe('queued');
    expect(store.lease('runner-b', RUNNER)?.processId).toBe(second.id);
    expect(store.lease('runner-c', RUNNER)).toBeUndefined();

    const running = store.started(first.id, fence(job!.token), 77);
    expect(running).toMatchObject({ status: 'running', pid: 77 });
    expect(running.startedAt).not.toBeNull();
  });

  it('counts a repeated started report once', () => {
    const { store, clock } = memoryStore();
    const { record, token } = runningProcess(store);
    clock.advance(1000);
    expect(store.started(record.id, fence(token), 999)).toEqual(record);
  });

  it('enqueues the job in the same transaction as the process record', () => {
    const failing = failingOn(SqliteDatabase.memory(), /INSERT INTO jobs/);
    const store = new ProcessStore(failing);
    expect(() => store.create(newProcess())).toThrow(/injected failure/);
    expect(store.list('ws')).toEqual([]);
    expect(store.lease('runner-a', RUNNER)).toBeUndefined();
  });

  it('hands stdin out again until the runner acknowledges it, so a lost reply loses nothing', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    store.writeStdin('ws', record.id, 'one\n', false);
    store.writeStdin('ws', record.id, 'two\n', false);
    // The reply to this heartbeat is lost on the way: the next one, still at ack 0, gets it all again.
    expect(store.heartbeat(record.id, fence(token), 0).stdin.map((chunk) => chunk.seq)).toEqual([1, 2]);
    expect(store.heartbeat(record.id, fence(token), 0).stdin.map((chunk) => chunk.data)).toEqual(['one\n', 'two\n']);
    // Acknowledged up to 1: only what follows comes back.
    expect(store.heartbeat(record.id, fence(token), 1).stdin.map((chunk) => chunk.data)).toEqual(['two\n']);
    expect(store.heartbeat(record.id, fence(token), 2).stdin).toEqual([]);
    // Numbers keep rising after acknowledged chunks are dropped, so a new chunk is never taken as seen.
    store.writeStdin('ws', record.id, 'three', true);
    expect(store.heartbeat(record.id, fence(token), 2).stdin).toEqual([{ seq: 3, data: 'three', eof: true }]);
    expect(store.heartbeat(record.id, fence(token), 3).stdin).toEqual([]);
  });
});

describe('fencing', () => {
  it('refuses a wrong token and a process without a job', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    expectStale(() => store.heartbeat(record.id, fence(token + 1)), record.id);
    expectStale(() => store.appendOutput('proc_missing', fence(1), 'x'), 'proc_missing');
  });

  it('refuses started, output, heartbeat and finish under a token that a re-lease replaced', () => {
    const { store, clock } = memoryStore();
    const created = store.create(newProcess());
    const stale = store.lease('runner-a', RUNNER)!;
    clock.advance(LEASE_MS + 1);
    expect(store.sweep()).toEqual([]);
    const fresh = store.lease('runner-b', RUNNER)!;
    expect(fresh.processId).toBe(created.id);
    expect(fresh.token).toBeGreaterThan(stale.token);

    expectStale(() => store.started(created.id, fence(stale.token), 1), created.id);
    store.started(created.id, fence(fresh.token), 2);
    expectStale(() => store.appendOutput(created.id, fence(stale.token), 'old'), created.id);
    expectStale(() => store.heartbeat(created.id, fence(stale.token)), created.id);
    expectStale(() => store.finish(created.id, fence(stale.token), { exitCode: 0, status: 'exited' }), created.id);

    store.appendOutput(created.id, fence(fresh.token), 'new');
    expect(store.finish(created.id, fence(fresh.token), { exitCode: 0, status: 'exited' })).toMatchObject({
      status: 'exited',
      pid: 2,
      outputChars: 3,
    });
    expect(store.readLogs('ws', created.id).data).toBe('new');
  });

  it('answers a repeated finish with the same token with the record, unchanged', () => {
    const { store, clock } = memoryStore();
    const { record, token } = runningProcess(store);
    const finished = store.finish(record.id, fence(token), { exitCode: 3, status: 'exited', conflicts: ['a.txt'] });
    expect(finished).toMatchObject({ status: 'exited', exitCode: 3, conflicts: ['a.txt'] });
    clock.advance(5000);
    expect(store.finish(record.id, fence(token), { exitCode: 9, status: 'failed', error: 'again' })).toEqual(finished);
    expectStale(() => store.heartbeat(record.id, fence(token)), record.id);
    expectStale(() => store.finish(record.id, fence(token + 1), { exitCode: 0, status: 'exited' }), record.id);
  });
});

describe('heartbeats and the sweeper', () => {
  it('marks a started process lost once its lease has expired, and refuses its runner afterwards', () => {
    const { store, clock } = memoryStore();
    const { record, token } = runningProcess(store);
    clock.advance(LEASE_MS);
    expect(store.sweep()).toEqual([]);
    clock.advance(1);
    expect(store.sweep()).toEqual([record.id]);
    const lost = store.get('ws', record.id)!;
    expect(lost).toMatchObject({ status: 'lost', endedAt: new Date(clock.ms).toISOString() });
    expect(lost.error).toMatch(/runner-a/);
    expect(store.sweep()).toEqual([]);
    expectStale(() => store.appendOutput(record.id, fence(token), 'late'), record.id);
    expectStale(() => store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' }), record.id);
    expect(store.get('ws', record.id)?.status).toBe('lost');
  });

  it('keeps a lease alive through heartbeats and output batches', () => {
    const { store, clock } = memoryStore();
    const { record, token } = runningProcess(store);
    for (let i = 0; i < 10; i++) {
      clock.advance(LEASE_MS - 1);
      if (i % 2 === 0) store.heartbeat(record.id, fence(token));
      else store.appendOutput(record.id, fence(token), 'tick\n');
      expect(store.sweep()).toEqual([]);
    }
    expect(store.get('ws', record.id)?.status).toBe('running');
  });

  it('marks a vanished runner lost within lease + 30 s when the sweeper runs every sweepIntervalMs', () => {
    for (const phase of [0, 1, 7_777, 29_999]) {
      const { store, clock } = memoryStore();
      expect(store.sweepIntervalMs).toBe(30_000);
      const { record, token } = runningProcess(store);
      clock.advance(phase);
      store.heartbeat(record.id, fence(token));
      const vanishedAt = clock.ms;
      // The sweeper ticks on its own schedule, unaligned with the runner's last heartbeat.
      clock.ms = vanishedAt - phase + store.sweepIntervalMs;
      while (store.sweep().length === 0) clock.advance(store.sweepIntervalMs);
      expect(clock.ms - vanishedAt).toBeLessThanOrEqual(LEASE_MS + 30_000);
      expect(clock.ms - vanishedAt).toBeGreaterThan(LEASE_MS);
    }
  });

  it('queues a job whose lease expired before it started again, and fails it after its third lease', () => {
    const { store, clock } = memoryStore();
    const created = store.create(newProcess());
    let queuedNotices = 0;
    store.onQueued(() => queuedNotices++);
    const tokens: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const job = store.lease(`runner-${attempt}`, RUNNER);
      expect(job?.processId).toBe(created.id);
      tokens.push(job!.token);
      clock.advance(LEASE_MS + 1);
      expect(store.sweep()).toEqual([]);
      expect(store.get('ws', created.id)?.status).toBe(attempt < 3 ? 'queued' : 'failed');
    }
    expect(new Set(tokens).size).toBe(3);
    expect(queuedNotices).toBe(2);
    expect(store.get('ws', created.id)?.error).toMatch(/3 leases/);
    expect(store.lease('runner-4', RUNNER)).toBeUndefined();
  });

  it('hands pending stdin over once, in order, with its eof, and a stop request on every heartbeat', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    expect(store.heartbeat(record.id, fence(token))).toEqual({ stdin: [], stop: null });
    store.writeStdin('ws', record.id, 'one\n', false);
    store.writeStdin('ws', record.id, 'two\n', false);
    store.writeStdin('ws', record.id, 'three', true);
    expect(store.heartbeat(record.id, fence(token)).stdin).toEqual([
      { seq: 1, data: 'one\n', eof: false },
      { seq: 2, data: 'two\n', eof: false },
      { seq: 3, data: 'three', eof: true },
    ]);
    expect(store.heartbeat(record.id, fence(token)).stdin).toEqual([]);
    store.requestStop('ws', record.id, 2500);
    expect(store.heartbeat(record.id, fence(token)).stop).toEqual({ graceMs: 2500 });
    expect(store.heartbeat(record.id, fence(token)).stop).toEqual({ graceMs: 2500 });
  });
});

describe('durability', () => {
  it('keeps jobs, leases and tokens across closing and reopening the database file', async () => {
    const { file, remove } = await tempDatabaseFile();
    try {
      let db = SqliteDatabase.open(file);
      let store = new ProcessStore(db);
      const { record, token } = runningProcess(store);
      const waiting = store.create(newProcess({ command: 'waits' }));
      db.close();

      db = SqliteDatabase.open(file);
      store = new ProcessStore(db);
      expect(store.appendOutput(record.id, fence(token), 'after restart')).toBe(13);
      expect(store.heartbeat(record.id, fence(token))).toEqual({ stdin: [], stop: null });
      const next = store.lease('runner-b', RUNNER);
      expect(next?.processId).toBe(waiting.id);
      expect(store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' }).status).toBe('exited');
      db.close();

      db = SqliteDatabase.open(file);
      store = new ProcessStore(db);
      expect(store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' }).status).toBe('exited');
      expect(store.started(waiting.id, fence(next!.token), 5).status).toBe('running');
      db.close();
    } finally {
      await remove();
    }
  });
});

describe('waiting for a job', () => {
  it('resolves at once when a job waits, when one is queued, and at its timeout otherwise', async () => {
    const { store } = memoryStore();
    vi.useFakeTimers();
    try {
      let resolved = false;
      void store.waitForJob(RUNNER, {}, 5_000).then(() => (resolved = true));
      await vi.advanceTimersByTimeAsync(4_999);
      expect(resolved).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(resolved).toBe(true);
    } finally {
      vi.useRealTimers();
    }

    const waiting = store.waitForJob(RUNNER, {}, 10_000);
    store.create(newProcess());
    await waiting;
    await store.waitForJob(RUNNER, {}, 10_000);
    store.lease('runner-a', RUNNER);
    const queuedLater = store.waitForJob(RUNNER, {}, 60_000);
    store.create(newProcess());
    await queuedLater;
  });

  it('wakes one waiter per queued job, oldest first, and a waiter that passes on wakes the next', async () => {
    const { store } = memoryStore();
    const settled: string[] = [];
    const waiters = ['a', 'b', 'c'].map((name) =>
      store.waitForJob(RUNNER, {}, 60_000).then((how) => settled.push(`${name}:${how}`)),
    );
    store.create(newProcess());
    await waiters[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['a:woken']);
    // a did not take the job (its runner hung up): passing it on wakes b, and only b.
    store.passOnJob();
    await waiters[1];
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['a:woken', 'b:woken']);
    // b took it: nothing waits, so passing on wakes no one.
    store.lease('runner-b', RUNNER);
    store.passOnJob();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['a:woken', 'b:woken']);
    // A job queued again (a lost lease) is a notice too.
    store.create(newProcess());
    await waiters[2];
    expect(settled).toEqual(['a:woken', 'b:woken', 'c:woken']);
  });
});

describe('a runner key bounded by its scope', () => {
  const runnerA = { keyId: 'key_a', workspaces: ['a'] };
  const runnerB = { keyId: 'key_b', workspaces: ['b'] };

  it('leases only jobs of workspaces in its scope, also when a dispatcher names the job', () => {
    const { store } = memoryStore();
    const inB = store.create(newProcess({ workspace: 'b' }));
    const inA = store.create(newProcess({ workspace: 'a' }));
    expect(store.lease('runner-a', runnerA)?.processId).toBe(inA.id);
    expect(store.lease('runner-a', runnerA)).toBeUndefined();
    expect(store.leaseJob(inB.id, 'runner-a', runnerA)).toBe('gone');
    expect(store.queuedJobs().map((job) => job.id)).toEqual([inB.id]);
    expect(store.leaseJob(inB.id, 'runner-b', runnerB)).toMatchObject({ processId: inB.id });
  });

  it('is woken only by jobs it may take, and a job passed on goes to a waiter that may take it', async () => {
    const { store } = memoryStore();
    const settled: string[] = [];
    const forA = store.waitForJob(runnerA, {}, 60_000).then((how) => settled.push(`a:${how}`));
    const forB = store.waitForJob(runnerB, {}, 60_000).then((how) => settled.push(`b:${how}`));
    store.create(newProcess({ workspace: 'b' }));
    await forB;
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['b:woken']);
    // The waiter for a is not woken by b's job passed on either.
    store.passOnJob();
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual(['b:woken']);
    store.create(newProcess({ workspace: 'a' }));
    await forA;
    expect(settled).toEqual(['b:woken', 'a:woken']);
  });

  it("refuses a report carrying the current token from any key but the lease's", () => {
    const { store } = memoryStore();
    const created = store.create(newProcess({ workspace: 'a' }));
    const job = store.lease('runner-a', runnerA)!;
    const refused = () => store.started(created.id, fence(job.token, runnerB.keyId), 1);
    expect(refused).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(() => store.finish(created.id, fence(job.token, runnerB.keyId), { exitCode: 0, status: 'exited' })).toThrow(
      expect.objectContaining({ code: 'forbidden' }),
    );
    expect(store.get('a', created.id)?.status).toBe('queued');
    expectStale(() => store.started(created.id, fence(job.token + 1, runnerA.keyId), 1), created.id);
    expect(store.started(created.id, fence(job.token, runnerA.keyId), 1).status).toBe('running');
  });

  it('lets a key read a workspace only while it holds a live lease on one of its jobs', () => {
    const { store, clock } = memoryStore();
    const refused = (workspace: string, keyId: string) => () => store.assertLeaseIn(workspace, keyId);
    const created = store.create(newProcess({ workspace: 'a' }));
    expect(refused('a', runnerA.keyId)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    const job = store.lease('runner-a', runnerA)!;
    store.assertLeaseIn('a', runnerA.keyId);
    expect(refused('a', runnerB.keyId)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(refused('b', runnerA.keyId)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    // Past its expiry (swept or not) the lease reads nothing.
    clock.advance(LEASE_MS + 1);
    expect(refused('a', runnerA.keyId)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    store.sweep();
    const again = store.lease('runner-a', runnerA)!;
    expect(again.processId).toBe(created.id);
    store.assertLeaseIn('a', runnerA.keyId);
    store.finish(created.id, fence(again.token, runnerA.keyId), { exitCode: 0, status: 'exited' });
    expect(refused('a', runnerA.keyId)).toThrow(expect.objectContaining({ code: 'forbidden' }));
    expect(job.token).toBeLessThan(again.token);
  });
});

describe('fair leasing', () => {
  const lease = (store: ProcessStore, wish = {}) => store.lease('runner', RUNNER, wish);
  const workspaceOf = (store: ProcessStore, wish = {}) => lease(store, wish)?.record.workspace;

  it('takes workspaces in turn, each at its oldest job', () => {
    const { store } = memoryStore();
    for (const workspace of ['a', 'a', 'a', 'b', 'c']) store.create(newProcess({ workspace }));
    expect([1, 2, 3, 4, 5].map(() => workspaceOf(store))).toEqual(['a', 'b', 'c', 'a', 'a']);
  });

  it('runs at most maxRunningPerWorkspace processes of one workspace; the rest wait until one ends', () => {
    const { store } = memoryStore({ maxRunningPerWorkspace: 2 });
    const inA = ['a', 'a', 'a'].map((workspace) => store.create(newProcess({ workspace })));
    const first = lease(store)!;
    lease(store);
    expect(lease(store)).toBeUndefined();
    expect(store.leaseJob(inA[2]!.id, 'runner', RUNNER)).toBe('later');
    store.create(newProcess({ workspace: 'b' }));
    expect(workspaceOf(store)).toBe('b');
    store.finish(first.processId, fence(first.token), { exitCode: 0, status: 'exited' });
    expect(lease(store)?.processId).toBe(inA[2]!.id);
  });

  it('hands a runner asking for exec only an exec, past older starts', () => {
    const { store } = memoryStore();
    store.create(newProcess({ workspace: 'a', mode: 'start' }));
    const exec = store.create(newProcess({ workspace: 'a', mode: 'exec', timeoutMs: 1000 }));
    expect(lease(store, { execOnly: true })?.processId).toBe(exec.id);
    expect(lease(store, { execOnly: true })).toBeUndefined();
    expect(lease(store)?.record.mode).toBe('start');
  });

  it('wakes a waiting runner when a slot frees for a job held back, and not before', async () => {
    const { store } = memoryStore({ maxRunningPerWorkspace: 1 });
    store.create(newProcess({ workspace: 'a' }));
    store.create(newProcess({ workspace: 'a' }));
    const running = lease(store)!;
    let woken = false;
    const waiting = store.waitForJob(RUNNER, {}, 60_000).then(() => (woken = true));
    store.passOnJob();
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toBe(false);
    store.finish(running.processId, fence(running.token), { exitCode: 0, status: 'exited' });
    await waiting;
    expect(lease(store)).toBeDefined();
  });
});

/** A database that throws when a statement matching `pattern` runs: a crash at that point. */
function failingOn(db: SqlDatabase, pattern: RegExp): SqlDatabase {
  return {
    query<R extends SqlRow = SqlRow>(sql: string, ...params: SqlValue[]): R[] {
      if (pattern.test(sql)) throw new Error('injected failure');
      return db.query<R>(sql, ...params);
    },
    script: (sql) => db.script(sql),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
  };
}

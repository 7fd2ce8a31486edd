// The process store from the agent's side: records, workspaces, stdin, stop, deletion, restarts and waiting.
import { describe, expect, it, vi } from 'vitest';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { snapshotOf } from '../../src/processes/process-record.ts';
import { ProcessStore } from '../../src/processes/process-store.ts';
import {
  RUNNER,
  T0,
  expectStale,
  fence,
  memoryStore,
  newProcess,
  runningProcess,
  tempDatabaseFile,
  toolErrorOf,
} from './process-fixtures.ts';

describe('process records', () => {
  it('creates a queued record with everything it was given', () => {
    const { store } = memoryStore();
    const record = store.create(
      newProcess({ command: 'make test', cwd: 'src', env: { CI: '1' }, mode: 'exec', timeoutMs: 120_000 }),
    );
    expect(record).toEqual({
      id: expect.stringMatching(/^proc_[0-9a-f]{32}$/),
      workspace: 'ws',
      command: 'make test',
      cwd: 'src',
      env: { CI: '1' },
      mode: 'exec',
      timeoutMs: 120_000,
      terminal: null,
      status: 'queued',
      pid: null,
      exitCode: null,
      timedOut: false,
      createdAt: new Date(T0).toISOString(),
      startedAt: null,
      endedAt: null,
      error: null,
      conflicts: [],
      outputChars: 0,
    });
    expect(store.get('ws', record.id)).toEqual(record);
    expect(store.create(newProcess()).id).not.toBe(record.id);
  });

  it('keeps the terminal a started process asked for, and none otherwise', () => {
    const { store } = memoryStore();
    const terminal = store.create(newProcess({ mode: 'start', timeoutMs: null, terminal: { cols: 80, rows: 24 } }));
    expect(store.get('ws', terminal.id)?.terminal).toEqual({ cols: 80, rows: 24 });
    expect(store.create(newProcess({ mode: 'start', timeoutMs: null })).terminal).toBeNull();
  });

  it('lists a workspace oldest first and hides each workspace from the others', () => {
    const { store } = memoryStore();
    const ids = ['a', 'b', 'c'].map((command) => store.create(newProcess({ command })).id);
    const elsewhere = store.create(newProcess({ workspace: 'other', command: 'x' }));
    expect(store.list('ws').map((record) => record.id)).toEqual(ids);
    expect(store.list('other').map((record) => record.id)).toEqual([elsewhere.id]);
    expect(store.get('other', ids[0]!)).toBeUndefined();
    expect(store.get('ws', elsewhere.id)).toBeUndefined();
    toolErrorOf(() => store.writeStdin('other', ids[0]!, 'x', false), 'not_found');
    toolErrorOf(() => store.requestStop('other', ids[0]!, 0), 'not_found');
    expect(store.get('ws', ids[0]!)?.status).toBe('queued');
  });

  it('records how a process ended, with exec output kept apart', () => {
    const { store, clock } = memoryStore();
    const { record, token } = runningProcess(store, { mode: 'exec', timeoutMs: 1000 });
    clock.advance(1500);
    const ended = store.finish(record.id, fence(token), {
      exitCode: 137,
      timedOut: true,
      status: 'exited',
      stdout: 'out',
      stderr: 'err',
      truncated: true,
    });
    expect(ended).toMatchObject({
      status: 'exited',
      exitCode: 137,
      timedOut: true,
      endedAt: new Date(T0 + 1500).toISOString(),
    });
    expect(store.execResult(record.id)).toEqual({ stdout: 'out', stderr: 'err', truncated: true });
    expect(snapshotOf(ended)).toEqual({
      processId: record.id,
      command: 'echo hi',
      cwd: '',
      status: 'exited',
      pid: 4242,
      exitCode: 137,
      startedAt: new Date(T0).toISOString(),
      endedAt: new Date(T0 + 1500).toISOString(),
    });
  });

  it('records a runner that could not start a process as failed, with its error', () => {
    const { store } = memoryStore();
    const created = store.create(newProcess());
    const job = store.lease('runner-a', RUNNER)!;
    const failed = store.finish(created.id, fence(job.token), {
      exitCode: null,
      status: 'failed',
      error: 'cwd src is missing',
    });
    expect(failed).toMatchObject({ status: 'failed', error: 'cwd src is missing', startedAt: null });
    expect(store.execResult(created.id)).toBeUndefined();
  });
});

describe('stdin', () => {
  it('refuses input after eof and after the end, and accepts input while queued', () => {
    const { store } = memoryStore();
    const queued = store.create(newProcess());
    expect(store.writeStdin('ws', queued.id, 'early', false)).toBe(5);
    expect(store.writeStdin('ws', queued.id, '', true)).toBe(0);
    const afterEof = toolErrorOf(() => store.writeStdin('ws', queued.id, 'more', false), 'conflict');
    expect(afterEof.message).toMatch(/already closed/);
    toolErrorOf(() => store.writeStdin('ws', queued.id, '', true), 'conflict');

    const job = store.lease('runner-a', RUNNER)!;
    store.started(queued.id, fence(job.token), 1);
    expect(store.heartbeat(queued.id, fence(job.token)).stdin).toEqual([
      { seq: 1, data: 'early', eof: false },
      { seq: 2, data: '', eof: true },
    ]);
    // Closed stays closed after the eof was handed over.
    toolErrorOf(() => store.writeStdin('ws', queued.id, 'x', false), 'conflict');

    const { record, token } = runningProcess(store);
    store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' });
    const ended = toolErrorOf(() => store.writeStdin('ws', record.id, 'late', false), 'conflict');
    expect(ended.message).toMatch(/has ended/);
  });
});

describe('stop', () => {
  it('stops a queued process at once so that it never runs', () => {
    const { store } = memoryStore();
    const created = store.create(newProcess());
    const stopped = store.requestStop('ws', created.id, 5000);
    expect(stopped).toMatchObject({
      status: 'stopped',
      exitCode: null,
      startedAt: null,
      endedAt: new Date(T0).toISOString(),
    });
    expect(store.lease('runner-a', RUNNER)).toBeUndefined();
    expect(store.requestStop('ws', created.id, 0)).toEqual(stopped);
  });

  it('refuses to start a process stopped while its job was leased', () => {
    const { store } = memoryStore();
    const created = store.create(newProcess());
    const job = store.lease('runner-a', RUNNER)!;
    expect(store.requestStop('ws', created.id, 5000).status).toBe('stopped');
    expectStale(() => store.started(created.id, fence(job.token), 1), created.id);
    expect(store.get('ws', created.id)?.status).toBe('stopped');
  });

  it('asks the runner of a running process to stop and records it stopped however it exits', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    expect(store.requestStop('ws', record.id, 3000)).toMatchObject({ status: 'running', endedAt: null });
    store.requestStop('ws', record.id, 10);
    expect(store.heartbeat(record.id, fence(token)).stop).toEqual({ graceMs: 3000 });
    const ended = store.finish(record.id, fence(token), { exitCode: 143, status: 'exited' });
    expect(ended).toMatchObject({ status: 'stopped', exitCode: 143 });
    expect(store.requestStop('ws', record.id, 0)).toEqual(ended);
  });
});

describe('deleting a workspace', () => {
  it('removes its processes, output, stdin and jobs, and refuses their runners', () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'output');
    store.writeStdin('ws', record.id, 'input', false);
    const queued = store.create(newProcess());
    const kept = store.create(newProcess({ workspace: 'other' }));

    store.deleteWorkspace('ws');
    expect(store.list('ws')).toEqual([]);
    expect(store.get('ws', record.id)).toBeUndefined();
    toolErrorOf(() => store.readLogs('ws', record.id), 'not_found');
    expectStale(() => store.heartbeat(record.id, fence(token)), record.id);
    expect(store.lease('runner-b', RUNNER)?.processId).toBe(kept.id);
    expect(store.get('ws', queued.id)).toBeUndefined();
  });
});

describe('restarts', () => {
  it('keeps records, output, stdin and stop requests across closing and reopening the database file', async () => {
    const { file, remove } = await tempDatabaseFile();
    try {
      let db = SqliteDatabase.open(file);
      let store = new ProcessStore(db, { chunkChars: 4 });
      const { record, token } = runningProcess(store, { env: { A: 'b' } });
      store.appendOutput(record.id, fence(token), 'hello, 😀 world\n');
      store.writeStdin('ws', record.id, 'y\n', true);
      store.requestStop('ws', record.id, 1234);
      const before = store.get('ws', record.id);
      db.close();

      db = SqliteDatabase.open(file);
      store = new ProcessStore(db, { chunkChars: 4 });
      expect(store.get('ws', record.id)).toEqual(before);
      expect(store.list('ws')).toEqual([before]);
      expect(store.readLogs('ws', record.id).data).toBe('hello, 😀 world\n');
      expect(store.heartbeat(record.id, fence(token))).toEqual({
        stdin: [{ seq: 1, data: 'y\n', eof: true }],
        stop: { graceMs: 1234 },
      });
      toolErrorOf(() => store.writeStdin('ws', record.id, 'n', false), 'conflict');
      db.close();
    } finally {
      await remove();
    }
  });
});

describe('notices and waiting', () => {
  it('notifies each change of a process and stops after unsubscribing', () => {
    const { store, clock } = memoryStore();
    const seen: string[] = [];
    const unsubscribe = store.onChange((id) => seen.push(id));
    const { record, token } = runningProcess(store);
    store.appendOutput(record.id, fence(token), 'x');
    store.requestStop('ws', record.id, 0);
    store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' });
    expect(seen).toEqual([record.id, record.id, record.id, record.id]);

    const other = runningProcess(store);
    clock.advance(60_000);
    store.sweep();
    expect(seen.slice(4)).toEqual([other.record.id, other.record.id]);
    unsubscribe();
    store.create(newProcess());
    store.requestStop('ws', store.list('ws').at(-1)!.id, 0);
    expect(seen).toHaveLength(6);
  });

  it('commits a change even when a listener throws', () => {
    const { store } = memoryStore();
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    store.onQueued(() => {
      throw new Error('listener bug');
    });
    const created = store.create(newProcess());
    expect(store.get('ws', created.id)?.status).toBe('queued');
    expect(quiet).toHaveBeenCalledOnce();
    quiet.mockRestore();
  });

  it('resolves waitForEnd when the process finishes', async () => {
    const { store } = memoryStore();
    const { record, token } = runningProcess(store);
    const waiting = store.waitForEnd('ws', record.id, 60_000);
    store.appendOutput(record.id, fence(token), 'not yet');
    setTimeout(() => store.finish(record.id, fence(token), { exitCode: 0, status: 'exited' }), 5);
    await expect(waiting).resolves.toMatchObject({ id: record.id, status: 'exited', outputChars: 7 });
    await expect(store.waitForEnd('ws', record.id, 60_000)).resolves.toMatchObject({ status: 'exited' });
  });

  it('resolves waitForEnd at its timeout with the current record', async () => {
    vi.useFakeTimers();
    try {
      const { store } = memoryStore();
      const { record } = runningProcess(store);
      let answer: unknown;
      void store.waitForEnd('ws', record.id, 60_000).then((value) => (answer = value));
      await vi.advanceTimersByTimeAsync(59_999);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(answer).toMatchObject({ id: record.id, status: 'running' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects waitForEnd for a process of another workspace or one deleted while waited for', async () => {
    const { store } = memoryStore();
    const { record } = runningProcess(store);
    await expect(store.waitForEnd('other', record.id, 10)).rejects.toMatchObject({ code: 'not_found' });
    const waiting = store.waitForEnd('ws', record.id, 60_000);
    store.deleteWorkspace('ws');
    await expect(waiting).rejects.toMatchObject({ code: 'not_found' });
  });
});

// Process stores on real SQLite with a hand-driven clock, and the steps that bring a process to running.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { isToolError, type ErrorCode } from '../../src/core/errors.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { ProcessRecord } from '../../src/processes/process-record.ts';
import { ProcessStore, type NewProcess, type ProcessStoreOptions } from '../../src/processes/process-store.ts';
import type { LeaseFence, LeaseHolder } from '../../src/processes/runner-reports.ts';

/** The runner key the tests lease with: every workspace. */
export const RUNNER: LeaseHolder = { keyId: 'key_runner', workspaces: ['*'] };

/** A lease's token as the runner key presents it. */
export function fence(token: number, keyId = RUNNER.keyId): LeaseFence {
  return { token, keyId };
}

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** A clock the test moves by hand. */
export class Clock {
  ms = T0;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export function memoryStore(options: ProcessStoreOptions = {}) {
  const clock = new Clock();
  const db = SqliteDatabase.memory();
  const store = new ProcessStore(db, { now: clock.now, ...options });
  return { store, clock, db };
}

/** A database file in a fresh temporary directory; `remove` deletes the directory. */
export async function tempDatabaseFile(): Promise<{ file: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-processes-'));
  return { file: join(dir, 'toolgate.db'), remove: () => rm(dir, { recursive: true, force: true }) };
}

export function newProcess(overrides: Partial<NewProcess> = {}): NewProcess {
  return { workspace: 'ws', command: 'echo hi', cwd: '', env: {}, mode: 'start', timeoutMs: null, ...overrides };
}

/** Creates a process, leases its job and reports it started: what a runner does first. */
export function runningProcess(
  store: ProcessStore,
  overrides: Partial<NewProcess> = {},
  runnerId = 'runner-a',
): { record: ProcessRecord; token: number } {
  const created = store.create(newProcess(overrides));
  const job = store.lease(runnerId, RUNNER);
  expect(job?.processId).toBe(created.id);
  const record = store.started(created.id, fence(job!.token), 4242);
  return { record, token: job!.token };
}

/** Runs `fn` and returns the ToolError it throws, failing when it throws nothing or something else. */
export function toolErrorOf(
  fn: () => unknown,
  code: ErrorCode,
): { message: string; details: Record<string, unknown> | undefined } {
  try {
    fn();
  } catch (error) {
    if (!isToolError(error)) throw error;
    expect(error.code).toBe(code);
    return { message: error.message, details: error.details };
  }
  throw new Error(`expected a ToolError ${code}, but nothing was thrown`);
}

/** Asserts that `fn` is refused as a stale lease of `processId`. */
export function expectStale(fn: () => unknown, processId: string): void {
  const error = toolErrorOf(fn, 'conflict');
  expect(error.message).toMatch(/^the lease token is stale: /);
  expect(error.details).toEqual({ processId });
}

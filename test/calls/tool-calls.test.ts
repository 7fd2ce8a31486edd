// The gate every tool call passes, in process on real stores (SQLite in memory, the memory object
// store) and an injected clock: scope, allowlist, arguments, approval, rate, quota, and exactly one
// usage record per call whatever its outcome.
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalStore } from '../../src/approvals/approval-store.ts';
import { ToolCalls, type CallAnswer } from '../../src/calls/tool-calls.ts';
import { KeyStore, type ApiKey, type NewKey } from '../../src/keys/key-store.ts';
import { RateLimiter } from '../../src/metering/rate-limiter.ts';
import { UsageMeter } from '../../src/metering/usage-meter.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const TTL_MS = 60_000;
const WS = 'gate';
const started: ToolCalls[] = [];
afterEach(() => {
  for (const calls of started.splice(0)) calls.stop();
});

function gate(options: { defaultRateLimitPerMinute?: number } = {}) {
  const clock = { ms: Date.UTC(2026, 2, 2, 9) };
  const now = () => clock.ms;
  const db = SqliteDatabase.memory();
  const workspaces = new Workspaces(db, new MemoryObjectStore());
  workspaces.create(WS);
  const keys = new KeyStore(db);
  const meter = new UsageMeter(db, now);
  const approvals = new ApprovalStore(db, now);
  const calls = new ToolCalls({
    tools: new ToolRegistry(builtinTools),
    workspaces,
    keys,
    approvals,
    meter,
    rateLimiter: new RateLimiter(now),
    limits: { maxFileBytes: 1024 * 1024, defaultReadMaxChars: 20_000, edgeMemoryBytes: 256 * 1024 * 1024 },
    approvalTtlMs: TTL_MS,
    defaultRateLimitPerMinute: options.defaultRateLimitPerMinute ?? 0,
    now,
  });
  calls.start();
  started.push(calls);
  const key = async (input: Partial<NewKey> = {}) =>
    (await keys.create({ name: 'k', role: 'agent', workspaces: [WS], approvalMode: 'auto', ...input })).key;
  const call = async (key: ApiKey, tool: string, args: unknown, more: { workspace?: string; waitMs?: number } = {}) => {
    const text = JSON.stringify(args);
    return answer(
      await calls.call({
        key,
        workspace: more.workspace ?? WS,
        tool,
        waitMs: more.waitMs,
        readArguments: async () => ({ value: args, bytes: text.length }),
      }),
    );
  };
  /** The usage records of a key: calls, errors and their outcomes, as GET /v1/usage counts them. */
  const usage = (key: ApiKey) => {
    const rows = meter.summary({ from: 0, to: Number.MAX_SAFE_INTEGER, groupBy: 'key', keyId: key.id });
    return { calls: rows[0]?.calls ?? 0, errors: rows[0]?.errors ?? 0 };
  };
  const read = async (path: string) => (await call(await key(), 'read_file', { path })).body;
  return { clock, calls, call, key, usage, read };
}

function answer(sent: CallAnswer): { status: number; body: any } {
  return { status: sent.status, body: JSON.parse(sent.json) };
}

describe('who may call what', () => {
  it('answers a workspace outside the key’s scope as absent, and records the call as an error', async () => {
    const { call, key, usage } = gate();
    const scoped = await key({ workspaces: ['elsewhere'] });
    const refused = await call(scoped, 'read_file', { path: 'a.txt' });
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(usage(scoped)).toEqual({ calls: 1, errors: 1 });
  });

  it('refuses a tool or bash action outside the key’s allowlist, naming it', async () => {
    const { call, key, usage } = gate();
    const narrow = await key({ tools: ['read_file', 'bash:list'] });
    const write = await call(narrow, 'write_file', { path: 'a.txt', content: 'a' });
    expect({ status: write.status, code: write.body.error.code }).toEqual({ status: 403, code: 'tool_not_allowed' });
    expect(write.body.error.message).toContain('write_file');
    const exec = await call(narrow, 'bash', { action: 'exec', command: 'true' });
    expect(exec.body.error.code).toBe('tool_not_allowed');
    expect((await call(narrow, 'read_file', { path: 'missing.txt' })).body.error.code).toBe('not_found');
    expect(usage(narrow)).toEqual({ calls: 3, errors: 3 });
  });

  it('refuses bad arguments before anything else, and runs good ones', async () => {
    const { call, key, usage, read } = gate();
    const agent = await key();
    expect((await call(agent, 'write_file', { path: 'a.txt' })).body.error.code).toBe('invalid_argument');
    expect((await call(agent, 'write_file', { path: '../a.txt', content: 'a' })).body.error.code).toBe(
      'path_outside_workspace',
    );
    const written = await call(agent, 'write_file', { path: 'a.txt', content: 'hello' });
    expect(written).toMatchObject({ status: 200, body: { result: { created: true, resolvedPath: 'a.txt' } } });
    expect((await read('a.txt')).result.content).toBe('hello');
    expect(usage(agent)).toEqual({ calls: 3, errors: 2 });
  });
});

describe('approval', () => {
  it('holds a write of a safe-mode key as a pending approval that changes nothing until approved, then runs it once', async () => {
    const { calls, call, key, usage, read } = gate();
    const agent = await key({ approvalMode: 'safe' });
    const approver = await key({ role: 'approver', approvalMode: undefined });
    expect((await call(agent, 'read_file', { path: 'nothing.txt' })).status).toBe(404);
    const pending = await call(agent, 'write_file', { path: 'held.txt', content: 'held' });
    expect(pending.status).toBe(202);
    expect(pending.body.approval).toMatchObject({
      status: 'pending',
      tool: 'write_file',
      arguments: { path: 'held.txt', content: 'held' },
    });
    expect((await read('held.txt')).error.code).toBe('not_found');
    const decided = await calls.decide(approver, pending.body.approval.id, 'approve', undefined);
    expect(decided).toMatchObject({ status: 'approved', result: { created: true } });
    expect((await read('held.txt')).result.content).toBe('held');
    // A second decision neither runs it again nor changes the outcome.
    await expect(calls.decide(approver, pending.body.approval.id, 'approve', undefined)).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(usage(agent)).toEqual({ calls: 2, errors: 1 });
  });

  it('answers a rejection with its reason, and the call is recorded as refused', async () => {
    const { calls, call, key, usage, read } = gate();
    const agent = await key({ approvalMode: 'manual' });
    const approver = await key({ role: 'approver', approvalMode: undefined });
    const pending = await call(agent, 'read_file', { path: 'x.txt' });
    expect(pending.status).toBe(202);
    const rejected = await calls.decide(approver, pending.body.approval.id, 'reject', 'not now');
    expect(rejected).toMatchObject({ status: 'rejected', reason: 'not now' });
    expect((await read('x.txt')).error.code).toBe('not_found');
    expect(usage(agent)).toEqual({ calls: 1, errors: 1 });
  });

  it('lets an agent key never decide, even its own approvals', async () => {
    const { calls, call, key } = gate();
    const agent = await key({ approvalMode: 'safe' });
    const pending = await call(agent, 'write_file', { path: 'self.txt', content: 's' });
    await expect(calls.decide(agent, pending.body.approval.id, 'approve', undefined)).rejects.toMatchObject({
      code: 'forbidden',
    });
  });

  it('expires a pending approval exactly when its time is up, not a moment before', async () => {
    const { clock, calls, call, key, usage, read } = gate();
    const agent = await key({ approvalMode: 'safe' });
    const pending = await call(agent, 'write_file', { path: 'late.txt', content: 'l' });
    const id = pending.body.approval.id;
    clock.ms += TTL_MS - 1;
    expect(calls.getApproval(agent, id).status).toBe('pending');
    clock.ms += 1;
    expect(calls.getApproval(agent, id)).toMatchObject({ status: 'rejected', reason: 'expired' });
    const approver = await key({ role: 'approver', approvalMode: undefined });
    await expect(calls.decide(approver, id, 'approve', undefined)).rejects.toMatchObject({ code: 'conflict' });
    expect((await read('late.txt')).error.code).toBe('not_found');
    expect(usage(agent)).toEqual({ calls: 1, errors: 1 });
  });

  it('follows the first matching rule before the mode: deny refuses outright, approve holds even a read', async () => {
    const { call, key } = gate();
    const ruled = await key({
      rules: [
        { tool: 'bash', action: 'exec', decision: 'deny' },
        { tool: 'read_file', decision: 'approve' },
      ],
    });
    expect((await call(ruled, 'bash', { action: 'exec', command: 'true' })).body.error.code).toBe('tool_not_allowed');
    expect((await call(ruled, 'read_file', { path: 'a.txt' })).status).toBe(202);
    expect((await call(ruled, 'write_file', { path: 'a.txt', content: 'a' })).status).toBe(200);
  });
});

describe('rate and quota', () => {
  it('refuses calls past the rate limit with the seconds to wait, and admits again once they pass', async () => {
    const { clock, call, key, usage } = gate({ defaultRateLimitPerMinute: 2 });
    const agent = await key();
    for (let i = 0; i < 2; i += 1) expect((await call(agent, 'read_file', { path: 'a.txt' })).status).toBe(404);
    const limited = await call(agent, 'read_file', { path: 'a.txt' });
    expect(limited.status).toBe(429);
    expect(limited.body.error.details).toMatchObject({ retryAfterSeconds: 30, limitPerMinute: 2 });
    // A key's own limit replaces the default.
    const roomy = await key({ rateLimitPerMinute: 100 });
    for (let i = 0; i < 3; i += 1) expect((await call(roomy, 'read_file', { path: 'a.txt' })).status).toBe(404);
    clock.ms += 30_000;
    expect((await call(agent, 'read_file', { path: 'a.txt' })).status).toBe(404);
    expect(usage(agent)).toEqual({ calls: 4, errors: 4 });
  });

  it('admits exactly the calls of a quota, then refuses with quota_exceeded until the period renews', async () => {
    const { clock, call, key, usage } = gate();
    const agent = await key({ quota: { calls: 2, period: 'day' } });
    expect((await call(agent, 'write_file', { path: 'q1.txt', content: '1' })).status).toBe(200);
    expect((await call(agent, 'read_file', { path: 'q1.txt' })).status).toBe(200);
    const spent = await call(agent, 'read_file', { path: 'q1.txt' });
    expect(spent.status).toBe(402);
    expect(spent.body.error).toMatchObject({ code: 'quota_exceeded', details: { quota: 'calls', limit: 2, used: 2 } });
    // Refused calls do not spend the quota, so the next day admits two again.
    clock.ms += 86_400_000;
    expect((await call(agent, 'read_file', { path: 'q1.txt' })).status).toBe(200);
    expect(usage(agent)).toEqual({ calls: 4, errors: 1 });
  });
});

describe('usage records', () => {
  it('leaves exactly one record per call, whatever its outcome', async () => {
    const { calls, call, key, usage } = gate();
    const agent = await key({ approvalMode: 'safe', tools: ['read_file', 'write_file', 'bash'] });
    const approver = await key({ role: 'approver', approvalMode: undefined });
    const outcomes = [
      await call(agent, 'read_file', { path: 'none.txt' }),
      await call(agent, 'apply_patch', { patch: '*** Begin Patch\n*** End Patch\n' }),
      await call(agent, 'write_file', { path: 'bad' }),
      await call(agent, 'read_file', { path: 'a.txt' }, { workspace: 'not-mine' }),
      await call(agent, 'write_file', { path: 'ok.txt', content: 'ok' }),
    ];
    expect(outcomes.map((outcome) => outcome.status)).toEqual([404, 403, 400, 404, 202]);
    expect(usage(agent).calls).toBe(5);
    await calls.decide(approver, outcomes[4]!.body.approval.id, 'approve', undefined);
    expect(usage(agent)).toEqual({ calls: 5, errors: 4 });
  });
});

// A verified delivery's way in-process: once per delivery id (concurrent repeats included), the
// answers kept for 7 days and swept after, an interrupted delivery never applied twice, retryable
// answers not kept, and the checkpoint after an applied patch.
import { afterEach, describe, expect, it } from 'vitest';
import { createCallServices, type CallServices } from '../../src/calls/call-services.ts';
import { DeliveryRecords, REPLAY_RETENTION_MS } from '../../src/hooks/delivery-records.ts';
import { HookDeliveries, type Checkpoints } from '../../src/hooks/hook-deliveries.ts';
import type { HookTarget } from '../../src/hooks/hook-store.ts';
import { BOOTSTRAP_KEY_ID } from '../../src/keys/key-store.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import type { Workspace } from '../../src/workspace/workspace.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const WS = 'hooked';
const hook: HookTarget = { id: 'ci', workspace: WS, ownerKeyId: BOOTSTRAP_KEY_ID, checkpoint: false };
const addFile = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+hello\n*** End Patch\n`;
/** A patch whose context is not in a.txt: patch_conflict (409). */
const conflicting = '*** Begin Patch\n*** Update File: a.txt\n@@\n-not there\n+x\n*** End Patch\n';

let open: { services: CallServices; db: SqliteDatabase } | undefined;
afterEach(() => {
  open?.services.calls.stop();
  open?.db.close();
  open = undefined;
});

async function setUp(options: { history?: Checkpoints; now?: () => number } = {}) {
  const db = SqliteDatabase.memory();
  const workspaces = new Workspaces(db, new MemoryObjectStore());
  const limits = {
    maxBodyBytes: 1024 * 1024,
    maxFileBytes: 1024 * 1024,
    defaultReadMaxChars: 20_000,
    edgeMemoryBytes: 256 * 1024 * 1024,
  };
  const services = createCallServices({ db, tools: new ToolRegistry(builtinTools), workspaces, limits });
  await services.keys.ensureBootstrapAdmin('tg_hook_test_admin_key');
  open = { services, db };
  workspaces.create(WS);
  const records = new DeliveryRecords(db, options.now);
  const deliveries = new HookDeliveries({
    calls: services.calls,
    keys: services.keys,
    records,
    workspaces,
    history: options.history,
    log: () => undefined,
  });
  const deliver = (deliveryId: string | undefined, body: unknown, target: HookTarget = hook) =>
    deliveries.deliver({
      hook: target,
      deliveryId,
      readBody: async () => ({ value: body, bytes: JSON.stringify(body).length }),
    });
  const files = () =>
    workspaces
      .open(WS)
      .manifestEntries()
      .map((entry) => entry.path);
  const calls = () =>
    services.meter
      .summary({ from: 0, to: Date.now() + REPLAY_RETENTION_MS * 2, groupBy: 'key' })
      .reduce((sum, row) => sum + row.calls, 0);
  return { db, workspaces, services, records, deliver, files, calls };
}

describe('HookDeliveries', () => {
  it('applies a delivery once however many repeats arrive at once, and every repeat answers as the first', async () => {
    const { deliver, files, services } = await setUp();
    const answers = await Promise.all(Array.from({ length: 100 }, () => deliver('d-1', { patch: addFile('a.txt') })));
    expect(new Set(answers.map((answer) => `${answer.status} ${answer.json}`)).size).toBe(1);
    expect(answers[0]!.status).toBe(200);
    expect(answers.filter((answer) => answer.headers['x-toolgate-replayed'] === 'true')).toHaveLength(99);
    expect(files()).toEqual(['a.txt']);
    // Metered once, under the owner key.
    const rows = services.meter.summary({ from: 0, to: Date.now() + 1000, groupBy: 'key' });
    expect(rows).toEqual([expect.objectContaining({ group: BOOTSTRAP_KEY_ID, calls: 1, errors: 0 })]);
    // Later repeats answer from the record; another delivery id runs again.
    expect((await deliver('d-1', { patch: addFile('a.txt') })).json).toBe(answers[0]!.json);
    expect((await deliver('d-2', { patch: addFile('b.txt') })).status).toBe(200);
    expect(files()).toEqual(['a.txt', 'b.txt']);
  });

  it('keeps a failed apply as the answer, but not an answer that invites a retry', async () => {
    const { deliver, services } = await setUp();
    const invalid = await deliver('bad', { patch: addFile('a.txt'), extra: 1 });
    expect(invalid.status).toBe(400);
    expect((await deliver('bad', { patch: addFile('a.txt') })).json).toBe(invalid.json);
    // A spent rate limit (429) leaves the delivery free to be tried again.
    const limited = await services.keys.create({
      name: 'limited',
      role: 'admin',
      workspaces: ['*'],
      rateLimitPerMinute: 1,
    });
    const target = { ...hook, ownerKeyId: limited.key.id };
    expect((await deliver('r-1', { patch: addFile('r1.txt') }, target)).status).toBe(200);
    expect((await deliver('r-2', { patch: addFile('r2.txt') }, target)).status).toBe(429);
    const unlimited = await services.keys.create({ name: 'unlimited', role: 'admin', workspaces: ['*'] });
    expect((await deliver('r-2', { patch: addFile('r2.txt') }, { ...hook, ownerKeyId: unlimited.key.id })).status).toBe(
      200,
    );
  });

  it('refuses a delivery of a revoked owner (403) without keeping the answer', async () => {
    const { deliver, services, files } = await setUp();
    const owner = await services.keys.create({ name: 'owner', role: 'admin', workspaces: ['*'] });
    services.keys.revoke(owner.key.id);
    const refused = await deliver('o-1', { patch: addFile('o.txt') }, { ...hook, ownerKeyId: owner.key.id });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.json).error.code).toBe('forbidden');
    expect(files()).toEqual([]);
    expect((await deliver('o-1', { patch: addFile('o.txt') })).status).toBe(200);
  });

  it('answers a delivery interrupted by a restart as a conflict, never applying it again', async () => {
    const { db, deliver, files } = await setUp();
    const stalled = new DeliveryRecords(db);
    void stalled.once(hook.id, 'lost', () => new Promise(() => undefined));
    const first = await deliver('lost', { patch: addFile('l.txt') });
    expect(first.status).toBe(409);
    expect(JSON.parse(first.json).error).toMatchObject({ code: 'conflict', details: { deliveryId: 'lost' } });
    expect((await deliver('lost', { patch: addFile('l.txt') })).json).toBe(first.json);
    expect(files()).toEqual([]);
  });

  it('keeps answers for 7 days and sweeps them after', async () => {
    let now = Date.now();
    const { deliver, records, calls } = await setUp({ now: () => now });
    expect((await deliver('old', { patch: addFile('a.txt') })).status).toBe(200);
    now += REPLAY_RETENTION_MS - 1000;
    expect(records.sweep()).toBe(0);
    expect((await deliver('old', { patch: addFile('a.txt') })).headers['x-toolgate-replayed']).toBe('true');
    expect(calls()).toBe(1);
    now += 2000;
    expect(records.sweep()).toBe(1);
    // Forgotten: the same delivery runs again.
    expect((await deliver('old', { patch: addFile('a.txt') })).headers['x-toolgate-replayed']).toBeUndefined();
    expect(calls()).toBe(2);
  });

  it('makes a checkpoint with the commit message after an applied patch, and reports one that fails', async () => {
    const made: { workspace: string; message: string | undefined }[] = [];
    let fail = false;
    const history: Checkpoints = {
      async checkpoint(workspace: Workspace, message?: string) {
        if (fail) throw new Error('disk on fire');
        made.push({ workspace: workspace.id, message });
        return { id: 'c0ffee', createdAt: '2025-01-01T00:00:00.000Z' };
      },
    };
    const { deliver, files } = await setUp({ history });
    const withCheckpoint = { ...hook, checkpoint: true };
    const applied = await deliver('c-1', { patch: addFile('a.txt'), commitMessage: 'from CI' }, withCheckpoint);
    expect(applied.status).toBe(200);
    expect(JSON.parse(applied.json)).toMatchObject({
      result: { summary: 'A a.txt' },
      checkpoint: { id: 'c0ffee', createdAt: '2025-01-01T00:00:00.000Z' },
    });
    expect(made).toEqual([{ workspace: WS, message: 'from CI' }]);
    // No checkpoint after a failed apply, nor for a hook without checkpoints.
    expect((await deliver('c-2', { patch: conflicting }, withCheckpoint)).status).toBe(409);
    expect(JSON.parse((await deliver('c-3', { patch: addFile('b.txt') })).json).checkpoint).toBeUndefined();
    expect(made).toHaveLength(1);
    fail = true;
    const failed = await deliver('c-4', { patch: addFile('c.txt') }, withCheckpoint);
    expect(failed.status).toBe(200);
    expect(JSON.parse(failed.json).checkpointError).toMatchObject({ code: 'internal' });
    expect(files()).toEqual(['a.txt', 'b.txt', 'c.txt']);
  });
});

// Stores shared by forks in several workspace objects, in workerd: each store's family object keeps
// its readers, and the store goes from R2 with the last of them, whatever the order of deletes.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { storeFamilies } from '../../src/cloudflare/store-family-object.ts';
import type { Env } from '../../src/cloudflare/bindings.ts';
import { api, keysUnder } from './worker-api.ts';

/** A new workspace holding one file and a checkpoint (so its store holds git objects too); answers its store's prefix. */
async function workspaceWithStore(name: string): Promise<string> {
  const before = new Set(await keysUnder('ws/'));
  expect((await api('PUT', `/v1/workspaces/${name}`)).status).toBe(201);
  const content = `${name} ${crypto.randomUUID()}\n`;
  expect((await api('POST', `/v1/workspaces/${name}/tools/write_file`, { path: 'f.txt', content })).status).toBe(200);
  expect((await api('POST', `/v1/workspaces/${name}/checkpoints`, { message: 'one' })).status).toBe(201);
  const added = (await keysUnder('ws/')).filter((key) => !before.has(key));
  const prefixes = new Set(added.map((key) => key.split('/').slice(0, 2).join('/') + '/'));
  expect(prefixes.size).toBe(1);
  return [...prefixes][0]!;
}

const read = async (workspace: string) =>
  (await api('POST', `/v1/workspaces/${workspace}/tools/read_file`, { path: 'f.txt' })).body?.result?.content;
const fork = async (from: string, to: string) =>
  expect((await api('POST', `/v1/workspaces/${from}/fork`, { to })).status).toBe(201);
const remove = async (workspace: string) =>
  expect((await api('DELETE', `/v1/workspaces/${workspace}`)).status).toBe(204);

describe('a store shared by forks in several objects', () => {
  it.each([
    ['the source first', ['fam-a', 'fam-a-1', 'fam-a-2']],
    ['the forks first', ['fam-a-2', 'fam-a-1', 'fam-a']],
    ['the middle first', ['fam-a-1', 'fam-a', 'fam-a-2']],
  ])('stays while any of a chain of forks reads it and goes with the last, %s', async (_, order) => {
    const suffix = crypto.randomUUID().slice(0, 8);
    const [source, first, second] = ['fam-a', 'fam-a-1', 'fam-a-2'].map((name) => `${name}-${suffix}`) as [
      string,
      string,
      string,
    ];
    const prefix = await workspaceWithStore(source);
    const content = await read(source);
    await fork(source, first);
    await fork(first, second);
    const stored = (await keysUnder(prefix)).length;
    expect(stored).toBeGreaterThan(1);
    const names = order.map((name) => `${name}-${suffix}`);
    for (const [index, name] of names.entries()) {
      await remove(name);
      const left = names.slice(index + 1);
      if (left.length === 0) break;
      for (const other of left) expect(await read(other)).toBe(content);
      expect((await keysUnder(prefix)).length).toBe(stored);
    }
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('is its own when never forked: deleting the workspace deletes it, as before', async () => {
    const prefix = await workspaceWithStore('fam-alone');
    await remove('fam-alone');
    expect(await keysUnder(prefix)).toEqual([]);
  });

  it('refuses a reader once the store is being deleted, and a reader that leaves twice changes nothing', async () => {
    const families = storeFamilies(env as unknown as Env);
    const store = `test-${crypto.randomUUID()}`;
    await env.BLOBS.put(`ws/${store}/blobs/aa/aa`, 'x');
    await families.join(store, [
      { uid: 'r-1', workspace: 'fam-r1' },
      { uid: 'r-2', workspace: 'fam-r2' },
    ]);
    await families.leave(store, 'r-1');
    await families.leave(store, 'r-1');
    expect(await keysUnder(`ws/${store}/`)).toHaveLength(1);
    await families.leave(store, 'r-2');
    expect(await keysUnder(`ws/${store}/`)).toEqual([]);
    await expect(families.join(store, [{ uid: 'r-3', workspace: 'fam-r3' }])).rejects.toMatchObject({
      code: 'conflict',
    });
  });

  it('refuses a call that names another store than the one its object holds, and deletes nothing of it', async () => {
    const store = `test-${crypto.randomUUID()}`;
    const other = `test-${crypto.randomUUID()}`;
    await env.BLOBS.put(`ws/${other}/blobs/aa/aa`, 'x');
    await storeFamilies(env as unknown as Env).join(store, [{ uid: 'r-1', workspace: 'fam-r1' }]);
    // The object named by `store`, asked about `other`.
    const misaddressed = storeFamilies({
      ...(env as unknown as Env),
      STORE_FAMILIES: {
        idFromName: () => env.STORE_FAMILIES.idFromName(store),
        get: (id: Parameters<typeof env.STORE_FAMILIES.get>[0]) => env.STORE_FAMILIES.get(id),
      },
    } as unknown as Env);
    await expect(misaddressed.leave(other, 'r-1')).rejects.toMatchObject({ code: 'internal' });
    expect(await keysUnder(`ws/${other}/`)).toHaveLength(1);
  });

  it('keeps a store shared before families were kept: a reader leaving a family that never had one deletes nothing', async () => {
    const families = storeFamilies(env as unknown as Env);
    const store = `test-${crypto.randomUUID()}`;
    await env.BLOBS.put(`ws/${store}/blobs/aa/aa`, 'x');
    await families.leave(store, 'r-old');
    expect(await keysUnder(`ws/${store}/`)).toHaveLength(1);
  });
});

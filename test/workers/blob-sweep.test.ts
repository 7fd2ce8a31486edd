// The Cloudflare home's blob sweeper in workerd: a workspace object sweeps its own store in R2 on
// its alarm once something changed, deleting contents nothing refers to (the grace is 0 here, see
// wrangler.toml), and leaves a store a fork in another object shares to the store's family.

import { runDurableObjectAlarm } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { api, keysUnder, storeHolding } from './worker-api.ts';

/** The keys of the contents stored in R2 under a store's prefix (other test files write beside these). */
const storedBlobs = async (prefix: string) => (await keysUnder(prefix)).filter((key) => key.includes('/blobs/'));

/** Waits until `probe` holds: the object's alarm runs by itself in workerd, 10 ms after a change. */
async function until(probe: () => Promise<boolean>): Promise<void> {
  while (!(await probe())) await new Promise((resolve) => setTimeout(resolve, 10));
}

const write = async (workspace: string, content: string) =>
  expect((await api('POST', `/v1/workspaces/${workspace}/tools/write_file`, { path: 'f.txt', content })).status).toBe(
    200,
  );
const read = async (workspace: string) =>
  (await api('POST', `/v1/workspaces/${workspace}/tools/read_file`, { path: 'f.txt' })).body.result.content;

describe('the blob sweeper on the Cloudflare home', () => {
  it('deletes the contents a workspace no longer refers to, on its alarm', async () => {
    expect((await api('PUT', '/v1/workspaces/gc')).status).toBe(201);
    const tag = crypto.randomUUID();
    await write('gc', `version 0 ${tag}\n`);
    const store = await storeHolding(`version 0 ${tag}\n`);
    for (let i = 1; i < 20; i++) await write('gc', `version ${i} ${tag}\n`);
    // The planned alarm is run now rather than waited for: beside other files' objects, workerd may run it late.
    const stub = env.WORKSPACES.get(env.WORKSPACES.idFromName('gc'));
    await until(async () => {
      await runDurableObjectAlarm(stub);
      return (await storedBlobs(store)).length === 1;
    });
    expect(await read('gc')).toBe(`version 19 ${tag}\n`);
    // Nothing left to sweep: no alarm is planned.
    await until(async () => !(await runDurableObjectAlarm(stub)));
  });

  it('leaves a store shared with a fork in another object to its family: the object alone deletes nothing the fork reads', async () => {
    expect((await api('PUT', '/v1/workspaces/gc-shared')).status).toBe(201);
    const tag = crypto.randomUUID();
    await write('gc-shared', `first ${tag}\n`);
    const store = await storeHolding(`first ${tag}\n`);
    expect((await api('POST', '/v1/workspaces/gc-shared/fork', { to: 'gc-fork' })).status).toBe(201);
    await write('gc-shared', `second ${tag}\n`);
    // 'first' is unreferenced in this object but the fork's: the object's alarm only tells the
    // family (test/workers/family-sweep.test.ts), and plans none once it has.
    const stub = env.WORKSPACES.get(env.WORKSPACES.idFromName('gc-shared'));
    await until(async () => !(await runDurableObjectAlarm(stub)));
    expect(await storedBlobs(store)).toHaveLength(2);
    expect(await read('gc-fork')).toBe(`first ${tag}\n`);
    expect(await read('gc-shared')).toBe(`second ${tag}\n`);
  });
});

// The Cloudflare home's blob sweeper in workerd: a workspace object sweeps its own store in R2 on
// its alarm once something changed, deleting contents nothing refers to (the grace is 0 here, see
// wrangler.toml), and leaves alone a store a fork in another object shares.

import { runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

const KEY = 'tg_workerd_test_admin_key_0123456789';

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await SELF.fetch(`https://toolgate.test${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The keys of the contents stored in R2, every store's. */
async function storedBlobs(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.BLOBS.list({ prefix: 'ws/', ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((object) => object.key).filter((key) => key.includes('/blobs/')));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return keys;
}

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
    const before = (await storedBlobs()).length;
    for (let i = 0; i < 20; i++) await write('gc', `version ${i}\n`);
    await until(async () => (await storedBlobs()).length === before + 1);
    expect(await read('gc')).toBe('version 19\n');
    // Nothing left to sweep: no alarm is planned.
    const stub = env.WORKSPACES.get(env.WORKSPACES.idFromName('gc'));
    await until(async () => !(await runDurableObjectAlarm(stub)));
  });

  it('plans no sweep of a store shared with a fork in another object', async () => {
    expect((await api('PUT', '/v1/workspaces/gc-shared')).status).toBe(201);
    await write('gc-shared', 'first\n');
    expect((await api('POST', '/v1/workspaces/gc-shared/fork', { to: 'gc-fork' })).status).toBe(201);
    const stored = (await storedBlobs()).length;
    await write('gc-shared', 'second\n');
    // 'first' is unreferenced in this object but the fork's: no sweep is planned, nothing goes.
    const stub = env.WORKSPACES.get(env.WORKSPACES.idFromName('gc-shared'));
    expect(await runDurableObjectAlarm(stub)).toBe(false);
    expect((await storedBlobs()).length).toBe(stored + 1);
    expect(await read('gc-fork')).toBe('first\n');
    expect(await read('gc-shared')).toBe('second\n');
  });
});

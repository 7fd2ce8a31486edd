// Single contents of a store shared by forks in several workspace objects, in workerd: the store's
// family object sweeps them across its readers (grace 0, interval 10 ms here, see wrangler.toml),
// deleting what no reader's entries, checkpoints or commits in flight need, and nothing else,
// however writes, forks, deletes and restores race it.

import { runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { raceAgainstSweeper } from '../support/sweep-race.ts';
import { api, KEY, keysUnder, storeHolding } from './worker-api.ts';

const blobsUnder = async (prefix: string) => (await keysUnder(`${prefix}blobs/`)).length;

/**
 * Waits until `probe` holds, running the planned alarms of the workspaces named and of the store's
 * family meanwhile (they run by themselves too, but beside other files' objects workerd may run them late).
 */
async function until(
  probe: () => Promise<boolean>,
  workspaces: readonly string[] = [],
  prefix?: string,
): Promise<void> {
  const stubs = workspaces.map((name) => env.WORKSPACES.get(env.WORKSPACES.idFromName(name)));
  if (prefix !== undefined) stubs.push(env.STORE_FAMILIES.get(env.STORE_FAMILIES.idFromName(prefix.split('/')[1]!)));
  while (!(await probe())) {
    for (const stub of stubs) await runDurableObjectAlarm(stub);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function sha256(content: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(content));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
const stored = async (prefix: string, content: string) => {
  const hash = await sha256(content);
  return (await keysUnder(`${prefix}blobs/${hash.slice(0, 2)}/${hash}`)).length === 1;
};

const write = async (workspace: string, path: string, content: string) => {
  const answer = await api('POST', `/v1/workspaces/${workspace}/tools/write_file`, { path, content });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
};
const read = async (workspace: string, path: string) => {
  const answer = await api('POST', `/v1/workspaces/${workspace}/tools/read_file`, { path, maxChars: 2_000_000 });
  expect(answer.status, `${workspace}/${path}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
  return answer.body.result.content as string;
};
const fork = async (from: string, to: string) => {
  const answer = await api('POST', `/v1/workspaces/${from}/fork`, { to });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
};

describe('the family sweep of a store shared across objects', () => {
  it('deletes what no reader needs and keeps what any entry or checkpoint of any reader names', async () => {
    const tag = crypto.randomUUID();
    const [a, b] = [`fs-a-${tag.slice(0, 8)}`, `fs-b-${tag.slice(0, 8)}`];
    expect((await api('PUT', `/v1/workspaces/${a}`)).status).toBe(201);
    await write(a, 'f.txt', `first ${tag}\n`);
    const prefix = await storeHolding(`first ${tag}\n`);
    await fork(a, b);
    // a moves on; b keeps 'first' in a checkpoint only; 'second' is in a, 'third' in b.
    await write(a, 'f.txt', `second ${tag}\n`);
    expect((await api('POST', `/v1/workspaces/${b}/checkpoints`, { message: 'first' })).status).toBe(201);
    await write(b, 'f.txt', `third ${tag}\n`);
    // Contents that only ever lived between two writes, in either object, go.
    await write(a, 'g.txt', `gone in a ${tag}\n`);
    await write(a, 'g.txt', `kept in a ${tag}\n`);
    await write(b, 'g.txt', `gone in b ${tag}\n`);
    await write(b, 'g.txt', `kept in b ${tag}\n`);
    await until(
      async () => !(await stored(prefix, `gone in a ${tag}\n`)) && !(await stored(prefix, `gone in b ${tag}\n`)),
      [a, b],
      prefix,
    );
    // A sweep still planned, run now, deletes nothing anyone reaches either.
    const family = env.STORE_FAMILIES.get(env.STORE_FAMILIES.idFromName(prefix.split('/')[1]!));
    await runDurableObjectAlarm(family);
    for (const content of ['first', 'second', 'third', 'kept in a', 'kept in b'])
      expect(await stored(prefix, `${content} ${tag}\n`), content).toBe(true);
    expect(await blobsUnder(prefix)).toBe(5);
    expect(await read(a, 'f.txt')).toBe(`second ${tag}\n`);
    expect(await read(b, 'f.txt')).toBe(`third ${tag}\n`);
    const checkpoints = (await api('GET', `/v1/workspaces/${b}/checkpoints`)).body.checkpoints;
    expect((await api('POST', `/v1/workspaces/${b}/restore`, { checkpoint: checkpoints[0].id })).status).toBe(200);
    expect(await read(b, 'f.txt')).toBe(`first ${tag}\n`);
  });

  it('leaves at most 2 MB for a 1 MB file a fork overwrites 100 times', async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const [source, copy] = [`fs-big-${tag}`, `fs-big-copy-${tag}`];
    expect((await api('PUT', `/v1/workspaces/${source}`)).status).toBe(201);
    await write(source, 'seed.txt', `seed ${tag}\n`);
    const prefix = await storeHolding(`seed ${tag}\n`);
    await fork(source, copy);
    const mb = (i: number) => `${String(i).padStart(4, '0')}${tag}${'x'.repeat(1024 * 1024 - 13)}\n`;
    for (let i = 0; i < 100; i++) await write(copy, 'big.txt', mb(i));
    // The seed and the last version stay; the 99 versions before it go.
    await until(async () => (await blobsUnder(prefix)) === 2, [source, copy], prefix);
    let bytes = 0;
    for (const key of await keysUnder(`${prefix}blobs/`)) bytes += (await env.BLOBS.head(key))!.size;
    expect(bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(await read(copy, 'big.txt')).toBe(mb(99));
    expect(await read(source, 'seed.txt')).toBe(`seed ${tag}\n`);
  }, 120_000);

  it('never loses a content any reader reaches, through rounds of writes, forks, deletes and restores across objects', async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const root = `fs-race-${tag}`;
    expect((await api('PUT', `/v1/workspaces/${root}`)).status).toBe(201);
    await write(root, 'f0.txt', `root ${tag}\n`);
    const prefix = await storeHolding(`root ${tag}\n`);
    // Every fork here is in an object of its own, so each lane's workspaces are readers of one family.
    // Fewer rounds than the Node home's 1,000 (test/http/blob-gc.test.ts): every object here shares
    // workerd's one thread, where a round of calls across objects costs some 15 times what it does on Node.
    await raceAgainstSweeper({
      call: (method, path, body) => api(method, path, body),
      root,
      name: (lane, made) => `${root}-l${lane}${made < 0 ? '' : `-${made}`}`,
      rounds: 240,
      contents: 600,
      tag,
      storedContents: () => blobsUnder(prefix),
    });
  }, 300_000);

  it('answers none of its calls from outside: a key holder cannot doom, rescue or release a content', async () => {
    const tag = crypto.randomUUID();
    const name = `fs-outside-${tag.slice(0, 8)}`;
    expect((await api('PUT', `/v1/workspaces/${name}`)).status).toBe(201);
    await write(name, 'f.txt', `kept ${tag}\n`);
    const prefix = await storeHolding(`kept ${tag}\n`);
    const store = prefix.split('/')[1]!;
    const hash = await sha256(`kept ${tag}\n`);
    const bodies: [string, unknown][] = [
      ['shared-store-check', { store, uid: 'u', round: 1, hashes: [hash], doom: [hash] }],
      ['shared-store-release', { store, hashes: [hash] }],
      ['family-rescue', { store, hash }],
      ['family-changed', { store }],
      ['family-leave', { store, reader: 'u' }],
    ];
    for (const [call, body] of bodies)
      for (const path of [`/internal/${call}`, `/v1/workspaces/${name}/../../internal/${call}`, `//internal/${call}`]) {
        const response = await SELF.fetch(`https://toolgate.test${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-toolgate-internal': '1' },
          body: JSON.stringify(body),
        });
        expect([401, 404], path).toContain(response.status);
      }
    expect(await stored(prefix, `kept ${tag}\n`)).toBe(true);
    expect(await read(name, 'f.txt')).toBe(`kept ${tag}\n`);
  });
});

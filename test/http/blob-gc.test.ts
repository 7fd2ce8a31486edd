// Storage reclaimed: contents no workspace, checkpoint or commit in flight refers to are deleted
// after the grace; racing writes, forks, deletes and checkpoints against the sweeper, and killing
// the server mid-sweep, never lose a byte anything can still reach.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer, removeDir, testHome, type ServerProcess } from '../support/server-process.ts';
import { raceAgainstSweeper } from '../support/sweep-race.ts';

/** Bytes of file contents in the Node home's store, every workspace's together. */
function storedBytes(dataDir: string): { files: number; bytes: number } {
  const total = { files: 0, bytes: 0 };
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(dir, name);
      // The sweeper may remove what the listing showed.
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat === undefined) continue;
      if (stat.isDirectory()) walk(path);
      else if (name.endsWith('.obj')) {
        total.files += 1;
        total.bytes += stat.size;
      }
    }
  };
  // The fs object store keeps key `ws/<store>/blobs/<xx>/<hash>` as `ws.d/<store>.d/blobs.d/<xx>.d/<hash>.obj`.
  const stores = join(dataDir, 'blobs', 'ws.d');
  for (const store of (() => {
    try {
      return readdirSync(stores);
    } catch {
      return [];
    }
  })())
    walk(join(stores, store, 'blobs.d'));
  return total;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) {
    await server.stop().catch(() => {});
    removeDir(server.dataDir);
  }
});

async function start(dataDir?: string): Promise<ServerProcess> {
  const server = await startServer({
    ...(dataDir ? { dataDir } : {}),
    env: { TOOLGATE_RUNNER: 'off', TOOLGATE_BLOB_GC_GRACE_MS: '0', TOOLGATE_BLOB_GC_INTERVAL_MS: '10' },
  });
  servers.push(server);
  return server;
}

const write = async (server: ServerProcess, ws: string, path: string, content: string) => {
  const answer = await server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
};
const read = async (server: ServerProcess, ws: string, path: string) => {
  const answer = await server.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path, maxChars: 2_000_000 });
  expect(answer.status, `${ws}/${path}: ${JSON.stringify(answer.body).slice(0, 300)}`).toBe(200);
  return answer.body.result.content as string;
};

// Node home: these measure the store on disk. The Cloudflare home's sweepers are tested in workerd
// against R2 itself: each workspace object's (the same code, on its alarm) in
// test/workers/blob-sweep.test.ts, and the family's, across objects, in test/workers/family-sweep.test.ts.
describe.skipIf(testHome === 'worker')('the blob sweeper', () => {
  it('leaves at most 2 MB for a 1 MB file overwritten 100 times, once the grace has passed', async () => {
    const server = await start();
    await server.call('PUT', '/v1/workspaces/big');
    const mb = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(1024 * 1024 - 5)}\n`;
    for (let i = 0; i < 100; i++) await write(server, 'big', 'big.txt', mb(i));
    // The grace is 0 and the sweeper runs every 10 ms: wait for it to catch up.
    const left = await until('the sweep', () => {
      const stored = storedBytes(server.dataDir);
      return stored.bytes <= 2 * 1024 * 1024 ? stored : undefined;
    });
    expect(left.files).toBe(1);
    expect(await read(server, 'big', 'big.txt')).toBe(mb(99));
  }, 120_000);

  it('never loses a content a workspace or checkpoint reaches, through 1,000 rounds of writes, forks, deletes and restores', async () => {
    const server = await start();
    await server.call('PUT', '/v1/workspaces/r0');
    // Lanes run at once, so commits land while the sweeper (every 10 ms, grace 0) is mid-sweep.
    await raceAgainstSweeper({
      call: (method, path, body) => server.call(method, path, body),
      root: 'r0',
      name: (lane, made) => (made < 0 ? `lane${lane}` : `r${lane}-${made}`),
      rounds: 1000,
      contents: 2000,
      storedContents: () => storedBytes(server.dataDir).files,
    });
  }, 300_000);

  it('leaves every reachable content when the server is killed mid-sweep', async () => {
    let server = await start();
    await server.call('PUT', '/v1/workspaces/kept');
    // Many contents to sweep: each file is written over a few times.
    for (let round = 0; round < 4; round++)
      for (let i = 0; i < 150; i++) await write(server, 'kept', `d/f${i}.txt`, `file ${i} round ${round}\n`);
    const dataDir = server.dataDir;
    const before = storedBytes(dataDir).files;
    // Kill it once the sweeper has begun deleting, and before it ends.
    await until('a sweep under way', () => (storedBytes(dataDir).files < before ? true : undefined));
    await server.kill();
    const during = storedBytes(dataDir).files;
    server = await start(dataDir);
    for (let i = 0; i < 150; i += 7) expect(await read(server, 'kept', `d/f${i}.txt`)).toBe(`file ${i} round 3\n`);
    await until('the sweep to end', () => (storedBytes(dataDir).files === 150 ? true : undefined));
    for (let i = 0; i < 150; i++) expect(await read(server, 'kept', `d/f${i}.txt`)).toBe(`file ${i} round 3\n`);
    expect(during).toBeGreaterThanOrEqual(150);
  }, 120_000);
});

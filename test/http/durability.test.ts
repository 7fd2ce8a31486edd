// Concurrency and crash safety over real HTTP: racing appends, many writers, SIGKILL mid-write.
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { callApi, makeDataDir, startServer, stopAfterAll, type ServerProcess } from '../support/server-process.ts';

const { servers, dirs } = stopAfterAll();

async function start(dataDir: string): Promise<ServerProcess> {
  const server = await startServer({ dataDir });
  servers.push(server);
  return server;
}

describe('concurrent writes', () => {
  it('100 concurrent appends to one file leave exactly 100 lines; 200 concurrent writes leave 200 files', async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const server = await start(dataDir);
    await server.call('PUT', '/v1/workspaces/race');

    const appends = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        server.call('POST', '/v1/workspaces/race/tools/write_file', {
          path: 'shared.log',
          content: `line ${i}\n`,
          mode: 'append',
        }),
      ),
    );
    expect(appends.map((answer) => answer.status)).toEqual(Array(100).fill(200));
    expect(appends.filter((answer) => answer.body.result.created)).toHaveLength(1);
    const log = await server.call('POST', '/v1/workspaces/race/tools/read_file', { path: 'shared.log' });
    expect(log.body.result.totalLines).toBe(100);
    const lines = (log.body.result.content as string).trimEnd().split('\n');
    expect(new Set(lines)).toEqual(new Set(Array.from({ length: 100 }, (_, i) => `line ${i}`)));

    const writes = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        server.call('POST', '/v1/workspaces/race/tools/write_file', { path: `many/f${i}.txt`, content: `${i}` }),
      ),
    );
    // The answers that were not a fresh create, shown whole if any: a status alone does not say why.
    // A failure shows the server's log too (under wrangler dev it says whether the runtime restarted).
    if (writes.some((answer) => answer.status !== 200)) console.error(`server output:\n${server.output()}`);
    expect(
      writes
        .filter((answer) => !(answer.status === 200 && answer.body.result?.created))
        .map((answer) => ({ status: answer.status, body: answer.body })),
    ).toEqual([]);
    const info = await server.call('GET', '/v1/workspaces/race');
    expect(info.body.files).toBe(201);
    const listing = await server.call('GET', '/v1/workspaces/race/files?prefix=many');
    expect(listing.body.entries).toHaveLength(200);
  });
});

describe('crash safety', () => {
  it('a server killed with SIGKILL mid-writes restarts with every acknowledged write present', async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const server = await start(dataDir);
    await server.call('PUT', '/v1/workspaces/crash');

    const acknowledged = new Map<string, string>();
    // Each writer's write that got no answer: docs/api.md lets it have happened, or not.
    const unanswered = new Map<string, string>();
    let stop = false;
    let answered = 0;
    const writer = async (id: number) => {
      for (let n = 0; !stop; n += 1) {
        const path = `w${id}/f${n % 20}.txt`;
        const content = `writer ${id} write ${n}\n`.repeat(1 + (n % 50));
        try {
          const answer = await callApi(server.url, server.key, 'POST', '/v1/workspaces/crash/tools/write_file', {
            path,
            content,
          });
          if (answer.status === 200) {
            acknowledged.set(path, content);
            answered += 1;
          }
        } catch {
          unanswered.set(path, content);
          return; // the connection died with the server
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, id) => writer(id));
    // The crash comes mid-stream, after a set number of writes rather than a set time, whatever the host's speed.
    await eventually(() => answered >= 100, { what: 'a hundred writes to be acknowledged', intervalMs: 10 });
    await server.kill();
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.size).toBeGreaterThan(20);

    const restarted = await start(dataDir);
    for (const [path, content] of acknowledged) {
      const answer = await restarted.call('POST', '/v1/workspaces/crash/tools/read_file', {
        path,
        maxChars: 1_000_000,
      });
      expect(answer.status).toBe(200);
      const found = answer.body.result.content;
      // The acknowledged write is there, unless the same writer's later, unanswered write to the same file landed.
      expect({ path, landed: found === content || found === unanswered.get(path) }).toEqual({ path, landed: true });
    }
    const info = await restarted.call('GET', '/v1/workspaces/crash');
    const listing = await restarted.call('GET', '/v1/workspaces/crash/files?recursive=true');
    const files = listing.body.entries.filter((entry: any) => entry.type === 'file');
    expect(info.body.files).toBe(files.length);
    expect(info.body.bytes).toBe(files.reduce((sum: number, entry: any) => sum + entry.size, 0));
  });
});

describe('usage records after a crash', () => {
  it('SIGKILL during 16 writers and 4 readers: every acknowledged write is whole, and the write records equal the writes present', async () => {
    const dataDir = makeDataDir();
    dirs.push(dataDir);
    const server = await start(dataDir);
    await server.call('PUT', '/v1/workspaces/metered');
    const from = Date.now() - 1000;

    // Every write goes to a path of its own, so each write that landed is one file present.
    const acknowledged = new Map<string, string>();
    let stop = false;
    let answered = 0;
    const writer = async (id: number) => {
      for (let n = 0; !stop; n += 1) {
        const path = `w${id}/f${n}.txt`;
        const content = `writer ${id} write ${n}\n`.repeat(1 + (n % 50));
        try {
          const answer = await callApi(server.url, server.key, 'POST', '/v1/workspaces/metered/tools/write_file', {
            path,
            content,
          });
          if (answer.status !== 200) throw new Error(`write ${path} answered ${answer.status}`);
          acknowledged.set(path, content);
          answered += 1;
        } catch (error) {
          if (stop || server.child.exitCode !== null || server.child.signalCode !== null) return;
          throw error;
        }
      }
    };
    // Readers' records may follow their answers (and be lost with the crash); writers' may not.
    const reader = async () => {
      while (!stop) {
        try {
          await callApi(server.url, server.key, 'POST', '/v1/workspaces/metered/tools/read_file', { path: 'none.txt' });
        } catch {
          return;
        }
      }
    };
    const running = [
      ...Array.from({ length: 16 }, (_, id) => writer(id)),
      ...Array.from({ length: 4 }, () => reader()),
    ];
    await eventually(() => answered >= 200, { what: 'two hundred writes to be acknowledged', intervalMs: 10 });
    stop = true;
    await server.kill();
    await Promise.all(running);

    const restarted = await start(dataDir);
    const listing = await restarted.call('GET', '/v1/workspaces/metered/files?recursive=true');
    const files = new Map<string, number>(
      listing.body.entries.filter((entry: any) => entry.type === 'file').map((entry: any) => [entry.path, entry.size]),
    );
    for (const [path, content] of acknowledged)
      expect({ path, size: files.get(path) }).toEqual({ path, size: new TextEncoder().encode(content).byteLength });
    // No half file: each present file holds exactly what its writer sent.
    for (const path of files.keys()) {
      const [, id, n] = /^w(\d+)\/f(\d+)\.txt$/.exec(path)!.map(Number);
      const read = await restarted.call('POST', '/v1/workspaces/metered/tools/read_file', {
        path,
        maxChars: 1_000_000,
      });
      expect({ path, content: read.body.result.content }).toEqual({
        path,
        content: `writer ${id} write ${n}\n`.repeat(1 + (n! % 50)),
      });
    }
    const usage = await restarted.call('GET', `/v1/usage?groupBy=tool&from=${from}&to=${Date.now() + 60_000}`);
    const writes = usage.body.rows.find((row: any) => row.group === 'write_file');
    expect({ calls: writes.calls, errors: writes.errors }).toEqual({ calls: files.size, errors: 0 });
  });
});

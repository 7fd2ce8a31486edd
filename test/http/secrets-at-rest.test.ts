// docs/api.md "Secrets at rest": the data dir is 0700 and the files holding secrets 0600, created so
// under the usual umask 022, from the first start on and again after a restart on the same dir.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callApi,
  makeDataDir,
  removeDir,
  startServer,
  testHome,
  type ServerProcess,
} from '../support/server-process.ts';

const scratch = makeDataDir();
const umask = process.umask();
const running: ServerProcess[] = [];

beforeAll(() => {
  // Servers inherit it: anything created without an explicit mode would be readable by all.
  process.umask(0o022);
});

afterAll(async () => {
  for (const server of running) await server.stop();
  removeDir(scratch);
  process.umask(umask);
});

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8);

/** Starts a server on `dataDir` without TOOLGATE_API_KEY, so its admin key is generated once and kept there. */
async function start(dataDir: string): Promise<{ server: ServerProcess; key: string }> {
  const server = await startServer({ dataDir, env: { TOOLGATE_API_KEY: '' } });
  running.push(server);
  return { server, key: readFileSync(join(dataDir, 'admin-key'), 'utf8').trim() };
}

async function stop(server: ServerProcess): Promise<void> {
  await server.stop();
  running.splice(running.indexOf(server), 1);
}

/** Writes a file and runs a command, so the blob store and the runner's copy have something in them. */
async function use(server: ServerProcess, key: string, content: string): Promise<void> {
  expect((await callApi(server.url, key, 'PUT', '/v1/workspaces/private')).status).toBeLessThan(300);
  const written = await callApi(server.url, key, 'POST', '/v1/workspaces/private/tools/write_file', {
    path: 'secret.txt',
    content,
  });
  expect(written.status, JSON.stringify(written.body)).toBe(200);
  const ran = await callApi(server.url, key, 'POST', '/v1/workspaces/private/tools/bash', {
    action: 'exec',
    command: 'cat secret.txt',
  });
  expect(ran.body.result, JSON.stringify(ran.body)).toMatchObject({ exitCode: 0, stdout: content });
}

/** Every directory and file under `dir` with its mode, as path → octal. */
function modesUnder(dir: string): Record<string, string> {
  const modes: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    modes[path.slice(dir.length + 1)] = modeOf(path);
  }
  return modes;
}

/** What the data dir of this home holds, with the mode each must have. */
function expectPrivate(dataDir: string): void {
  const wanted: Record<string, string> = { '.': '700', 'admin-key': '600', runner: '700' };
  if (testHome === 'node') {
    Object.assign(wanted, { 'toolgate.db': '600', 'toolgate.db-wal': '600', blobs: '700' });
    // The database runs in exclusive locking mode, which keeps the WAL index in memory; a -shm
    // file, where there is one, gets the database's mode from SQLite as the -wal does.
    if (existsSync(join(dataDir, 'toolgate.db-shm'))) wanted['toolgate.db-shm'] = '600';
  } else {
    Object.assign(wanted, { 'worker.env': '600', wrangler: '700' });
  }
  const actual = Object.fromEntries(
    Object.keys(wanted).map((name) => [name, existsSync(join(dataDir, name)) ? modeOf(join(dataDir, name)) : 'absent']),
  );
  expect(actual).toEqual(wanted);
  if (testHome === 'node') {
    // Tenants' content: every directory of the blob store 0700, every object 0600.
    const blobs = modesUnder(join(dataDir, 'blobs'));
    expect(Object.keys(blobs).length).toBeGreaterThan(0);
    for (const [path, mode] of Object.entries(blobs)) {
      const wantedMode = statSync(join(dataDir, 'blobs', path)).isDirectory() ? '700' : '600';
      expect({ path, mode }).toEqual({ path, mode: wantedMode });
    }
  }
}

describe(`secrets at rest (${testHome} home)`, () => {
  it('creates the data dir 0700 and its secret-holding files 0600, and keeps them so across a restart', async () => {
    const dataDir = join(scratch, 'fresh', 'data');
    const first = await start(dataDir);
    await use(first.server, first.key, 'first\n');
    expectPrivate(dataDir);
    await stop(first.server);

    const second = await start(dataDir);
    // The kept admin key is read back, not generated again.
    expect(second.key).toBe(first.key);
    expect(second.server.output()).not.toContain('generated the first admin key');
    await use(second.server, second.key, 'second\n');
    expectPrivate(dataDir);
    await stop(second.server);
  });

  // Both homes' starters tighten the data dir with the same makePrivateDir before anything else,
  // so one home proves it: on the Cloudflare home it cost one more wrangler dev start in CI.
  it.skipIf(testHome === 'worker')('tightens a data dir that already exists with a wider mode', async () => {
    const dataDir = join(scratch, 'wide');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const { server, key } = await start(dataDir);
    await use(server, key, 'wide\n');
    expectPrivate(dataDir);
    await stop(server);
  });
});

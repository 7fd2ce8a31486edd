// `npm start` as a new user runs it: default address, a generated admin key, data kept across restarts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { callApi, makeDataDir, removeDir, repoRoot, startServer } from '../support/server-process.ts';

const dataDir = makeDataDir();
/** Process groups of `npm start` runs still alive: a failing test must not leave a server on 8787. */
const running = new Set<number>();
afterAll(() => {
  for (const group of running) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  removeDir(dataDir);
});

/** Runs `npm start` with only TOOLGATE_DATA set (so no test data lands in the checkout). */
async function npmStart(): Promise<{ output: () => string; stop: () => Promise<void> }> {
  // Another server already answering there would make this test talk to it instead.
  if (
    await fetch('http://127.0.0.1:8787/healthz').then(
      () => true,
      () => false,
    )
  ) {
    throw new Error('127.0.0.1:8787 is already in use by another process; stop it and run the test again.');
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    TOOLGATE_DATA: dataDir,
  };
  const child = spawn('npm', ['start', '--silent'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  running.add(child.pid!);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const healthy = await eventually(
    async () =>
      child.exitCode !== null
        ? 'exited'
        : (await fetch('http://127.0.0.1:8787/healthz').then(
            (response) => response.ok,
            () => false,
          )) && 'serving',
    {
      what: 'npm start to serve on 127.0.0.1:8787',
      intervalMs: 100,
    },
  ).catch(() => 'silent');
  if (healthy !== 'serving') throw new Error(`npm start did not serve on 127.0.0.1:8787:\n${output}`);
  return {
    output: () => output,
    async stop() {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      running.delete(child.pid!);
    },
  };
}

describe('npm start with no configuration', () => {
  it('serves on 127.0.0.1:8787, prints a generated key once, and keeps data across a restart', async () => {
    const first = await npmStart();
    const secret = readFileSync(join(dataDir, 'admin-key'), 'utf8').trim();
    expect(secret).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(first.output()).toContain(secret);
    const base = 'http://127.0.0.1:8787';
    expect((await callApi(base, secret, 'PUT', '/v1/workspaces/keep')).status).toBe(201);
    const written = await callApi(base, secret, 'POST', '/v1/workspaces/keep/tools/write_file', {
      path: 'a.txt',
      content: 'kept\n',
    });
    expect(written.status).toBe(200);
    await first.stop();

    const second = await npmStart();
    expect(second.output()).not.toContain(secret);
    const read = await callApi(base, secret, 'POST', '/v1/workspaces/keep/tools/read_file', { path: 'a.txt' });
    expect(read.body.result).toMatchObject({ content: 'kept\n', version: written.body.result.version });
    await second.stop();
  });
});

describe('one server per data directory', () => {
  it('a second server on the same data directory refuses to start and says why; the first keeps serving', async () => {
    const shared = makeDataDir();
    const first = await startServer({ dataDir: shared });
    try {
      await expect(startServer({ dataDir: shared })).rejects.toThrow(/in use by another process/);
      expect((await first.call('PUT', '/v1/workspaces/still-here')).status).toBe(201);
    } finally {
      await first.stop();
      removeDir(shared);
    }
  });
});

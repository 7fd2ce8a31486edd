// GET /diff against the Node server started in this process, so the event loop it runs on is the one
// measured here: a checkpoint diff of a file replaced whole (20,000 lines by 20,000 others) once held
// the server for minutes in a minimal diff of the whole file. Now it answers a diff that turns the
// checkpoint's file into the current one, while a 10 ms timer is never more than 100 ms late.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNodeConfig } from '../../src/node/config.ts';
import { startNodeServer, type RunningServer } from '../../src/node/server.ts';
import { callApi, removeDir, TEST_KEY } from '../support/server-process.ts';

const MAX_LATENESS_MS = 100;
let server: RunningServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-diff-loop-'));
  server = await startNodeServer(
    readNodeConfig({ TOOLGATE_DATA: dataDir, TOOLGATE_API_KEY: TEST_KEY, PORT: '0', TOOLGATE_RUNNER: 'off' }),
  );
});

afterAll(async () => {
  await server?.close();
  removeDir(dataDir);
});

const call = (method: string, path: string, body?: unknown) => callApi(server.url, TEST_KEY, method, path, body);

describe('a checkpoint diff of a large rewrite', () => {
  it('answers a diff that applies, and holds the event loop no more than 100 ms at a time', async () => {
    expect((await call('PUT', '/v1/workspaces/rewrite')).status).toBeLessThan(300);
    const lines = (prefix: string, seed: number) =>
      Array.from({ length: 20_000 }, (_, i) => `${prefix} ${(i * seed) % 9973} ${'x'.repeat(i % 30)}\n`).join('');
    const before = lines('old', 31);
    const after = lines('new', 37);
    const write = (content: string) =>
      call('POST', '/v1/workspaces/rewrite/tools/write_file', { path: 'big.txt', content });
    expect((await write(before)).status).toBe(200);
    const checkpoint = await call('POST', '/v1/workspaces/rewrite/checkpoints', {});
    expect(checkpoint.status).toBe(201);
    expect((await write(after)).status).toBe(200);

    let worst = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last - 10);
      last = now;
    }, 10);
    let answer;
    try {
      answer = await call('GET', `/v1/workspaces/rewrite/diff?from=${checkpoint.body.id}`);
    } finally {
      clearInterval(timer);
    }
    expect(answer.status).toBe(200);
    const diff = answer.body.diff as string;
    expect(diff.startsWith('diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n')).toBe(true);
    expect(applyPatch(before, diff.slice(diff.indexOf('--- a/big.txt')))).toBe(after);
    expect(worst).toBeLessThanOrEqual(MAX_LATENESS_MS);
  });
});

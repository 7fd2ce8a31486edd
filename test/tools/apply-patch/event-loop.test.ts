// apply_patch over real HTTP against the Node server started in this process, so that the event loop the
// server runs on is the one measured here: the stall patch (bench/apply-patch-bench.ts builds the same)
// is refused with work_limit while a 10 ms timer is never more than 100 ms late (docs/api.md), and
// oversized, malformed and hostile patches are refused with the contract's codes, nothing changed.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNodeConfig } from '../../../src/node/config.ts';
import { startNodeServer, type RunningServer } from '../../../src/node/server.ts';
import { callApi, removeDir, TEST_KEY, type ApiAnswer } from '../../support/server-process.ts';

/** The contract's bound on how long one request may hold the event loop (docs/api.md). */
const MAX_LATENESS_MS = 100;
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_FILE_BYTES = 768 * 1024;

let server: RunningServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-patch-loop-'));
  const config = readNodeConfig({
    TOOLGATE_DATA: dataDir,
    TOOLGATE_API_KEY: TEST_KEY,
    PORT: '0',
    TOOLGATE_RUNNER: 'off',
    TOOLGATE_MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    TOOLGATE_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
  });
  server = await startNodeServer(config);
});

afterAll(async () => {
  await server?.close();
  removeDir(dataDir);
});

const call = (method: string, path: string, body?: unknown): Promise<ApiAnswer> =>
  callApi(server.url, TEST_KEY, method, path, body);
const envelope = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');

let counter = 0;
async function workspace(files: Record<string, string>): Promise<string> {
  const ws = `loop-${(counter += 1)}`;
  expect((await call('PUT', `/v1/workspaces/${ws}`)).status).toBeLessThan(300);
  for (const [path, content] of Object.entries(files)) {
    expect((await call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content })).status).toBe(200);
  }
  return ws;
}

/** Every file's content and version, and the workspace's version: what "nothing changed" compares. */
async function state(ws: string, paths: string[]): Promise<unknown> {
  const files = [];
  for (const path of paths) {
    const read = await call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path, maxChars: 10_000_000 });
    files.push([path, read.status, read.body?.result?.content, read.body?.result?.version]);
  }
  return { files, version: (await call('GET', `/v1/workspaces/${ws}`)).body?.version };
}

const patchIn = (ws: string, patch: string, dryRun?: boolean) =>
  call('POST', `/v1/workspaces/${ws}/tools/apply_patch`, dryRun === undefined ? { patch } : { patch, dryRun });

/**
 * The stall patch: a 100,000-line file repeating `ab`, `ab`, `cd`, and a 200 KB hunk of 50,000
 * context lines repeating them too but for its last line: it nearly matches at every third line
 * and matches nowhere, and all its lines occur in the file. Before the work budget, locating it
 * held the event loop for tens of seconds.
 */
function stallCase(): { file: string; hunk: string[] } {
  const cycle = ['ab', 'ab', 'cd'];
  const lines = Array.from({ length: 100_000 }, (_, i) => cycle[i % 3]!);
  const context = lines.slice(1, 50_001);
  context[context.length - 1] = 'ab'; // where the file has `cd`
  return { file: `${lines.join('\n')}\n`, hunk: ['@@', ...context.map((line) => ` ${line}`)] };
}

/** Runs `work` while a 10 ms timer measures how late it fires; answers the result and the worst lateness. */
async function withLatenessMonitor<T>(work: () => Promise<T>): Promise<{ result: T; worstMs: number; ticks: number }> {
  let worstMs = 0;
  let ticks = 0;
  let expected = performance.now() + 10;
  const timer = setInterval(() => {
    const now = performance.now();
    worstMs = Math.max(worstMs, now - expected);
    ticks += 1;
    expected = now + 10;
  }, 10);
  try {
    const result = await work();
    // The last interval too: a request that held the loop to its end would otherwise go unseen.
    worstMs = Math.max(worstMs, performance.now() - expected);
    return { result, worstMs, ticks };
  } finally {
    clearInterval(timer);
  }
}

describe('apply_patch and the event loop', () => {
  it('refuses the stall patch with work_limit while a 10 ms timer is never more than 100 ms late, changing nothing', async () => {
    const { file, hunk } = stallCase();
    const ws = await workspace({ 'stall.txt': file });
    const before = await state(ws, ['stall.txt']);
    const patch = envelope('*** Update File: stall.txt', ...hunk);
    expect(patch.length).toBeGreaterThan(200_000);
    const { result: answer, worstMs, ticks } = await withLatenessMonitor(() => patchIn(ws, patch));
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('patch_conflict');
    expect(answer.body.error.details).toMatchObject({ path: 'stall.txt', hunk: 1, line: 3, reason: 'work_limit' });
    expect(answer.body.error.message).toMatch(/could not be located within the work limit/);
    expect(answer.body.error.message).toMatch(/nothing was changed/);
    expect(ticks).toBeGreaterThan(0);
    expect(worstMs).toBeLessThan(MAX_LATENESS_MS);
    expect(await state(ws, ['stall.txt'])).toEqual(before);
  });

  it('refuses it in a dry run too, and in a patch whose other files would apply: nothing changes anywhere', async () => {
    const { file, hunk } = stallCase();
    const ws = await workspace({ 'stall.txt': file, 'ok.txt': 'one\ntwo\n' });
    const before = await state(ws, ['stall.txt', 'ok.txt', 'added.txt']);
    const patch = envelope(
      '*** Update File: ok.txt',
      '@@',
      '-one',
      '+uno',
      '*** Add File: added.txt',
      '+new',
      '*** Update File: stall.txt',
      ...hunk,
    );
    for (const dryRun of [true, false]) {
      const answer = await patchIn(ws, patch, dryRun);
      expect(answer.status).toBe(409);
      expect(answer.body.error.details).toMatchObject({ path: 'stall.txt', hunk: 1, reason: 'work_limit' });
    }
    expect(await state(ws, ['stall.txt', 'ok.txt', 'added.txt'])).toEqual(before);
  });

  it('answers a hunk whose lines are not in the file at all as an ordinary conflict, without a reason', async () => {
    const ws = await workspace({ 'same.txt': `${Array.from({ length: 100_000 }, () => 'ab').join('\n')}\n` });
    const before = await state(ws, ['same.txt']);
    const context = [...Array.from({ length: 49_999 }, () => ' ab'), ' zz'];
    const { result: answer, worstMs } = await withLatenessMonitor(() =>
      patchIn(ws, envelope('*** Update File: same.txt', '@@', ...context)),
    );
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('patch_conflict');
    expect(answer.body.error.details.reason).toBeUndefined();
    expect(answer.body.error.message).toMatch(/these lines were not found/);
    expect(worstMs).toBeLessThan(MAX_LATENESS_MS);
    expect(await state(ws, ['same.txt'])).toEqual(before);
  });

  it('still applies a large patch that needs the forgiving passes, with the loop on time', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `  value(${i % 50}); // ${i}  `);
    const ws = await workspace({ 'big.ts': `${lines.join('\n')}\n` });
    const hunks: string[] = [];
    const expected = [...lines];
    for (let at = 10; at < lines.length - 1; at += 40) {
      // Context without the file's trailing whitespace: only the second pass finds it.
      hunks.push('@@', ` ${lines[at - 1]!.trimEnd()}`, `-${lines[at]!.trimEnd()}`, `+  changed(${at});`);
      expected[at - 1] = lines[at - 1]!.trimEnd(); // a context line becomes the patch's, as in Codex
      expected[at] = `  changed(${at});`;
    }
    const { result: answer, worstMs } = await withLatenessMonitor(() =>
      patchIn(ws, envelope('*** Update File: big.ts', ...hunks)),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result.summary).toBe('M big.ts');
    expect(worstMs).toBeLessThan(MAX_LATENESS_MS);
    const read = await call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path: 'big.ts', maxChars: 10_000_000 });
    expect(read.body.result.content).toBe(`${expected.join('\n')}\n`);
  });
  it('applies 30,000 one-line hunks, and answers their diff, with the loop on time', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `v${i}`);
    const ws = await workspace({ 'many.txt': `${lines.join('\n')}\n` });
    const hunks: string[] = [];
    const expected = [...lines];
    for (let at = 0; at < lines.length; at += 2) {
      hunks.push('@@', `-v${at}`, `+w${at}`);
      expected[at] = `w${at}`;
    }
    const { result: answer, worstMs } = await withLatenessMonitor(() =>
      patchIn(ws, envelope('*** Update File: many.txt', ...hunks)),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.result.files[0].diff.split('\n').filter((line: string) => line.startsWith('+w'))).toHaveLength(
      30_000,
    );
    expect(worstMs).toBeLessThan(MAX_LATENESS_MS);
    const read = await call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path: 'many.txt', maxChars: 10_000_000 });
    expect(read.body.result.content).toBe(`${expected.join('\n')}\n`);
  });
});

describe('apply_patch refuses what it must, changing nothing', () => {
  it('refuses a patch over the body limit with 413 payload_too_large', async () => {
    const ws = await workspace({ 'f.txt': 'a\n' });
    const before = await state(ws, ['f.txt']);
    const patch = envelope('*** Update File: f.txt', '@@', '-a', '+xxxxxx\n'.repeat(200_000));
    expect(patch.length).toBeGreaterThan(MAX_BODY_BYTES);
    const answer = await patchIn(ws, patch);
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe('payload_too_large');
    expect(await state(ws, ['f.txt'])).toEqual(before);
  });

  it('refuses a patch whose file would grow over the file limit with 413 payload_too_large', async () => {
    const ws = await workspace({ 'f.txt': 'a\n' });
    const before = await state(ws, ['f.txt']);
    const added = Array.from({ length: 9_000 }, () => `+${'x'.repeat(99)}`);
    const answer = await patchIn(ws, envelope('*** Update File: f.txt', '@@', ' a', ...added));
    expect([answer.status, answer.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(answer.body.error.details).toMatchObject({ path: 'f.txt', limit: MAX_FILE_BYTES });
    expect(await state(ws, ['f.txt'])).toEqual(before);
  });

  it('refuses malformed patches with 400 patch_invalid naming the line', async () => {
    const ws = await workspace({ 'f.txt': 'a\n' });
    const before = await state(ws, ['f.txt']);
    const malformed: [string, number][] = [
      ['*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n', 5], // no End Patch
      [envelope('*** Update File: f.txt', '@@', '?a'), 4], // a hunk line of no kind
      [envelope('*** Frobnicate File: f.txt'), 2],
      ['just some text\n', 1],
      ['\u0000\u0001binary\n', 1],
    ];
    for (const [patch, line] of malformed) {
      const answer = await patchIn(ws, patch);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'patch_invalid']);
      expect(answer.body.error.details.line).toBe(line);
    }
    const binary = await patchIn(
      ws,
      'diff --git a/f.txt b/f.txt\nindex 1..2 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n',
    );
    expect([binary.status, binary.body.error.code]).toEqual([400, 'patch_invalid']);
    expect(await state(ws, ['f.txt'])).toEqual(before);
  });

  it('refuses paths outside the workspace and into .git/hooks, whatever else the patch does', async () => {
    const ws = await workspace({ 'f.txt': 'a\n' });
    const before = await state(ws, ['f.txt']);
    const escape = await patchIn(
      ws,
      envelope('*** Update File: f.txt', '@@', '-a', '+b', '*** Add File: ../x.txt', '+x'),
    );
    expect([escape.status, escape.body.error.code]).toEqual([403, 'path_outside_workspace']);
    const hook = await patchIn(
      ws,
      envelope('*** Update File: f.txt', '@@', '-a', '+b', '*** Add File: .git/hooks/pre-commit', '+x'),
    );
    expect([hook.status, hook.body.error.code]).toEqual([403, 'path_denied']);
    expect(await state(ws, ['f.txt'])).toEqual(before);
  });
});

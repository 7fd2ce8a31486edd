// docs/api.md "Files a command leaves" over real HTTP and real bubblewrap, on both homes: no file
// outside the runner's copy is read, written or removed on a command's behalf, whatever links a
// running command creates or swaps while execs, API writes and syncs go on beside it.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { removeDir, useServer } from '../support/server-process.ts';

const server = useServer();
const WS = 'confined';
// A set number of rounds, not a set time: the same race on a fast host and a slow one.
const ROUNDS = 30;
const SECRET = `canary-${randomBytes(12).toString('hex')}`;
let canary: string;

/** Every entry below `dir` with its type and, for files, a hash of its bytes: what must not change. */
function snapshot(dir: string, prefix = ''): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    const key = `${prefix}${name}`;
    if (stat.isDirectory()) {
      found[key] = `dir ${stat.mode.toString(8)}`;
      Object.assign(found, snapshot(path, `${key}/`));
    } else {
      found[key] =
        `${stat.isFile() ? 'file' : 'other'} ${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    }
  }
  return found;
}

async function ok(answer: Promise<{ status: number; body: any }>): Promise<any> {
  const settled = await answer;
  expect(settled.status, JSON.stringify(settled.body)).toBe(200);
  return settled.body;
}

// exec on a runner: its confinement is what is tested (auto would answer some commands in the handler).
const bash = (args: Record<string, unknown>) =>
  server.call('POST', `/v1/workspaces/${WS}/tools/bash`, args.action === 'exec' ? { engine: 'runner', ...args } : args);

/** The workspace's files that hold the canary's secret, read through the API. */
async function leaked(): Promise<string[]> {
  const listing = await server.call('GET', `/v1/workspaces/${WS}/files?recursive=true`);
  expect(listing.status).toBe(200);
  const found: string[] = [];
  for (const entry of listing.body.entries as { path: string; type: string }[]) {
    if (entry.type !== 'file') continue;
    const read = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, {
      path: entry.path,
      maxChars: 1_000_000,
    });
    if (read.status === 200 && (read.body.result.content as string).includes(SECRET)) found.push(entry.path);
  }
  return found;
}

beforeAll(async () => {
  canary = mkdtempSync(join(tmpdir(), 'toolgate-canary-'));
  writeFileSync(join(canary, 'canary.txt'), `${SECRET}\n`);
  mkdirSync(join(canary, 'dir'));
  writeFileSync(join(canary, 'dir', 'inside.txt'), `${SECRET} inside\n`);
  writeFileSync(join(canary, 'x'), `${SECRET} x\n`);
  expect((await server.call('PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
  await ok(server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'f', content: 'real file\n' }));
  await ok(server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'd/x', content: 'real x\n' }));
});

afterAll(() => {
  if (canary) removeDir(canary);
});

describe('a command that swaps entries of its copy for links to a host file', () => {
  it('never gets the host file into the workspace, and nothing outside the copy changes', async () => {
    const before = snapshot(canary);
    // Swaps, as fast as it can: the file f and the directory d between real entries and links to
    // the canary file and folder (absolute host paths, so only the runner's host could follow them).
    const swapper = [
      'while true; do',
      `  ln -sfn ${canary}/canary.txt f.link && mv -Tf f.link f`,
      '  printf "real file\\n" > f.new && mv -Tf f.new f',
      `  rm -rf d.old; mv -T d d.old 2>/dev/null; ln -sfn ${canary} d.link && mv -Tf d.link d`,
      '  rm -f d; mv -T d.old d 2>/dev/null || { mkdir -p d && printf "real x\\n" > d/x; }',
      `  ln -sfn ${canary}/x n.link && mv -Tf n.link new.txt; rm -f new.txt`,
      'done',
    ].join('\n');
    const started = (await ok(bash({ action: 'start', command: swapper }))).result;
    let round = 0;
    let served = 0;
    const leaks: string[] = [];
    try {
      for (; round < ROUNDS; round += 1) {
        // An exec reads and writes beside it (materialise, overlay, scan, sync), and the API
        // changes what materialise must put where the swapper plays. An exec may fail when the
        // swapper takes away a directory its copy is being written into; it must never leak.
        const exec = await bash({
          action: 'exec',
          command: `cat f d/x 2>/dev/null | head -c 100 >/dev/null; echo ${round} > round.txt; mkdir -p out && echo ${round} > out/r${round % 3}`,
          timeoutMs: 60_000,
        });
        if (exec.status === 200) served += 1;
        // What the sync just committed: no file may hold the canary's bytes, even for a moment.
        leaks.push(...(await leaked()));
        await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, {
          path: `d/api-${round % 2}.txt`,
          content: `api ${round}\n`,
        });
        await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'x', content: `api x ${round}\n` });
      }
    } finally {
      await bash({ action: 'stop', processId: started.processId, graceMs: 0 });
    }
    await eventually(
      async () =>
        ['stopped', 'exited'].includes(
          (await ok(bash({ action: 'status', processId: started.processId }))).result.status,
        ),
      { what: 'the swapping process to end', intervalMs: 100 },
    );
    expect(served).toBeGreaterThan(3);

    // The canary's folder: the same entries with the same bytes and modes.
    expect(snapshot(canary)).toEqual(before);
    // No file of the workspace holds the canary's content (links are kept as links, never read through).
    leaks.push(...(await leaked()));
    expect(leaks).toEqual([]);
  }, 180_000);
});

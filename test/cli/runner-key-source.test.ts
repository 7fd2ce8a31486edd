// Where a separate runner takes its key: a key file or TOOLGATE_RUNNER_KEY keeps it off the
// command line other users of the host can read; --key still works, with a warning.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, type TestKey } from '../support/keys.ts';
import { startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { makeDataDir, removeDir, repoRoot, useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
const scratch = makeDataDir();
const runners: RunnerProcess[] = [];
let key: TestKey;
const umask = process.umask();

beforeAll(async () => {
  // The common default: what a runner creates without an explicit mode would be readable by all.
  process.umask(0o022);
  await server.call('PUT', '/v1/workspaces/key-source');
  key = await createKey(server, { role: 'runner', workspaces: ['*'] });
});

afterAll(async () => {
  for (const runner of runners) await runner.kill('SIGKILL');
  removeDir(scratch);
  process.umask(umask);
});

/** Writes a key file with `mode`, created so (never wider first). */
function keyFile(name: string, content: string, mode = 0o600): string {
  const path = join(scratch, name);
  writeFileSync(path, content, { mode, flag: 'wx' });
  return path;
}

/** Runs `toolgate runner` that is expected to refuse to start: its exit code and stderr. */
async function refusedStart(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bin/toolgate.js', 'runner', '--url', server.url, '--data', join(scratch, 'refused'), ...args],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

describe('toolgate runner --key-file', () => {
  it('serves a job with the key read from a 0600 file, keeps the key off its command line, and its data dir 0700', async () => {
    const dataDir = join(scratch, 'runner-data');
    const runner = await startRunner(server.url, key.secret, dataDir, {
      keyFile: keyFile('runner.key', `  ${key.secret}\n`),
    });
    runners.push(runner);
    const answer = await server.call('POST', '/v1/workspaces/key-source/tools/bash', {
      action: 'exec',
      command: 'echo served',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.result).toMatchObject({ exitCode: 0, stdout: 'served\n' });
    const cmdline = readFileSync(`/proc/${runner.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('--key-file');
    expect(cmdline).not.toContain(key.secret);
    expect(runner.output()).not.toContain('WARNING: a key given with --key');
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    await runner.kill();
  });

  it('refuses a key file that group or others may read, an empty one and a missing one, naming the fix', async () => {
    const open = await refusedStart(['--key-file', keyFile('open.key', key.secret, 0o644)]);
    expect(open.code).toBe(2);
    expect(open.stderr).toContain('chmod 600');
    const groupReadable = await refusedStart(['--key-file', keyFile('group.key', key.secret, 0o640)]);
    expect(groupReadable.code).toBe(2);
    const empty = await refusedStart(['--key-file', keyFile('empty.key', ' \n')]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('is empty');
    expect((await refusedStart(['--key-file', join(scratch, 'absent.key')])).code).toBe(2);
    const none = await refusedStart([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('TOOLGATE_RUNNER_KEY');
    const both = await refusedStart(['--key', key.secret, '--key-file', keyFile('both.key', key.secret)]);
    expect(both.code).toBe(2);
  });
});

describe('toolgate runner --key', () => {
  it('still works, and warns on stderr that the key is visible to other users of the host', async () => {
    const runner = await startRunner(server.url, key.secret, join(scratch, 'argv-data'), 'argv');
    runners.push(runner);
    expect(runner.output()).toContain('WARNING: a key given with --key is visible to every user of this host');
    const answer = await server.call('POST', '/v1/workspaces/key-source/tools/bash', {
      action: 'exec',
      command: 'echo still served',
    });
    expect(answer.body.result).toMatchObject({ exitCode: 0, stdout: 'still served\n' });
    await runner.kill();
  });
});

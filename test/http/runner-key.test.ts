// Runner keys: a separate runner serves jobs with a key of role runner, and only runner
// (or admin) keys may lease jobs.
import { afterAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { makeDataDir, removeDir, useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
let runner: RunnerProcess | undefined;
const runnerDir = makeDataDir();
afterAll(async () => {
  await runner?.kill('SIGKILL');
  removeDir(runnerDir);
});

describe('a key of role runner', () => {
  it('runs a separate runner that serves bash jobs', async () => {
    await server.call('PUT', '/v1/workspaces/runner-key');
    const key = await createKey(server, { role: 'runner', workspaces: ['*'] });
    runner = await startRunner(server.url, key.secret, runnerDir);
    const answer = await server.call('POST', '/v1/workspaces/runner-key/tools/bash', {
      action: 'exec',
      command: 'echo served > by-runner.txt; echo ok',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.result).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
    const read = await server.call('POST', '/v1/workspaces/runner-key/tools/read_file', { path: 'by-runner.txt' });
    expect(read.body.result.content).toBe('served\n');
  });

  it('is the only kind besides admin that may lease jobs', async () => {
    for (const role of ['agent', 'approver']) {
      const key = await createKey(server, { role, workspaces: ['*'] });
      const answer = await key.call('POST', '/v1/runner/lease', { runnerId: 'intruder', waitMs: 0 });
      expect({ role, status: answer.status, code: answer.body.error.code }).toEqual({
        role,
        status: 403,
        code: 'forbidden',
      });
    }
  });
});

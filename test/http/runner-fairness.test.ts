// docs/api.md "Sandbox and resources" fairness over real HTTP, on both homes: one workspace's started
// processes never starve another's exec, a workspace runs at most its share at once, and
// started processes never take a runner's last slot.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createRunnerKey } from '../support/keys.ts';
import { startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { makeDataDir, removeDir, useServer, type ServerProcess } from '../support/server-process.ts';

async function bash(server: ServerProcess, ws: string, args: Record<string, unknown>): Promise<any> {
  const answer = await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, args);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.result;
}

async function statuses(server: ServerProcess, ws: string): Promise<string[]> {
  return ((await bash(server, ws, { action: 'list' })).processes as { status: string }[]).map(
    (process) => process.status,
  );
}

describe('the in-process runner', () => {
  const server = useServer({ env: { TOOLGATE_WORKSPACE_MAX_PROCESSES: '3' } });

  it("runs at most a workspace's share of its started processes, and another workspace's exec goes first", async () => {
    for (const ws of ['busy', 'other']) expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    const started = [];
    for (let i = 0; i < 10; i += 1)
      started.push((await bash(server, 'busy', { action: 'start', command: 'sleep 300' })).processId as string);
    await eventually(
      async () => (await statuses(server, 'busy')).filter((status) => status === 'running').length === 3,
      { what: 'three of them to run', intervalMs: 100 },
    );
    // An exec no runner picks up within its timeoutMs answers 503: answered, it was picked up in time.
    const exec = await bash(server, 'other', { action: 'exec', command: 'echo ok', timeoutMs: 2000 });
    expect(exec).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
    const now = await statuses(server, 'busy');
    expect(now.filter((status) => status === 'running')).toHaveLength(3);
    expect(now.filter((status) => status === 'queued')).toHaveLength(7);
    // A slot of the workspace frees: the next of its processes runs.
    await bash(server, 'busy', { action: 'stop', processId: started[0], graceMs: 0 });
    await eventually(
      async () =>
        (await statuses(server, 'busy')).filter((status) => status === 'running').length === 3 &&
        (await statuses(server, 'busy')).filter((status) => status === 'queued').length === 6,
      { what: 'the fourth to run', intervalMs: 100 },
    );
    for (const processId of started) await bash(server, 'busy', { action: 'stop', processId, graceMs: 0 });
  });
});

describe('a runner with two slots', () => {
  const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
  const dataDir = makeDataDir();
  let runner: RunnerProcess | undefined;
  afterAll(async () => {
    await runner?.kill('SIGKILL');
    removeDir(dataDir);
  });

  it('keeps its last slot for exec: a second started process waits while an exec runs', async () => {
    for (const ws of ['first', 'second', 'third'])
      expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    runner = await startRunner(server.url, (await createRunnerKey(server)).secret, dataDir);
    const first = (await bash(server, 'first', { action: 'start', command: 'sleep 300' })).processId;
    await eventually(async () => (await statuses(server, 'first'))[0] === 'running', {
      what: 'the first started process to run',
      intervalMs: 100,
    });
    const second = (await bash(server, 'second', { action: 'start', command: 'sleep 300' })).processId;
    const exec = await bash(server, 'third', { action: 'exec', command: 'echo served', timeoutMs: 5000 });
    expect(exec).toMatchObject({ exitCode: 0, stdout: 'served\n' });
    expect(await statuses(server, 'second')).toEqual(['queued']);
    // Once the first ends, its slot takes the second.
    await bash(server, 'first', { action: 'stop', processId: first, graceMs: 0 });
    await eventually(async () => (await statuses(server, 'second'))[0] === 'running', {
      what: 'the second started process to run',
      intervalMs: 100,
    });
    await bash(server, 'second', { action: 'stop', processId: second, graceMs: 0 });
  });
});

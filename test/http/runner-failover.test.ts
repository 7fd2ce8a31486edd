// Runners as separate processes: a killed runner's job becomes lost, stale reports are refused,
// a new runner takes over, and a server restart keeps a running process's status and logs.
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, makeDataDir, removeDir, startServer, type ServerProcess } from '../support/server-process.ts';
import { freePort, startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(env: Record<string, string>, dataDir = makeDataDir()): Promise<ServerProcess> {
  const started = await startServer({ dataDir, env: { TOOLGATE_RUNNER: 'off', ...env } });
  cleanups.push(async () => {
    if (started.child.exitCode === null && started.child.signalCode === null) await started.stop();
  });
  return started;
}

async function runner(target: ServerProcess): Promise<RunnerProcess> {
  const dataDir = makeDataDir();
  const started = await startRunner(target.url, (await createRunnerKey(target)).secret, dataDir);
  cleanups.push(async () => {
    await started.kill('SIGKILL');
    removeDir(dataDir);
  });
  return started;
}

async function statusOf(target: ServerProcess, ws: string, processId: string): Promise<any> {
  return (await target.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'status', processId })).body.result;
}

describe('runner failure', () => {
  // That it is lost within lease + 30 s is test/processes/job-queue.test.ts's to assert, on an injected clock.
  it('a runner killed mid-job leaves the job lost; a new runner serves the next jobs', async () => {
    const target = await server({ TOOLGATE_LEASE_MS: '2000' });
    cleanups.push(() => removeDir(target.dataDir));
    await target.call('PUT', '/v1/workspaces/fo');
    const first = await runner(target);
    const started = (
      await target.call('POST', '/v1/workspaces/fo/tools/bash', { action: 'start', command: 'sleep 120' })
    ).body.result;
    await eventually(async () => (await statusOf(target, 'fo', started.processId)).status === 'running', {
      what: 'the job to run',
      intervalMs: 100,
    });
    await first.kill('SIGKILL');
    await eventually(async () => (await statusOf(target, 'fo', started.processId)).status === 'lost', {
      what: 'the job to be lost',
      timeoutMs: 45_000,
      intervalMs: 250,
    });
    await runner(target);
    const exec = await target.call('POST', '/v1/workspaces/fo/tools/bash', { action: 'exec', command: 'echo served' });
    expect(exec.body.result).toMatchObject({ exitCode: 0, stdout: 'served\n' });
  });

  it('a delayed report carrying a stale token is refused', async () => {
    const target = await server({ TOOLGATE_LEASE_MS: '1000' });
    cleanups.push(() => removeDir(target.dataDir));
    await target.call('PUT', '/v1/workspaces/st');
    const started = (await target.call('POST', '/v1/workspaces/st/tools/bash', { action: 'start', command: 'true' }))
      .body.result;
    // Play a runner that leases the job, starts it, then goes silent.
    const runnerKey = (await createRunnerKey(target)).secret;
    const lease = await callApi(target.url, runnerKey, 'POST', '/v1/runner/lease', {
      runnerId: 'silent',
      waitMs: JOB_WAIT_MS,
    });
    expect(lease.body.job.processId).toBe(started.processId);
    const { token } = lease.body.job;
    expect(
      (
        await callApi(
          target.url,
          runnerKey,
          'POST',
          `/v1/runner/workspaces/st/processes/${started.processId}/started`,
          { token, pid: 1 },
        )
      ).status,
    ).toBe(200);
    await eventually(async () => (await statusOf(target, 'st', started.processId)).status === 'lost', {
      what: 'the job to be lost',
      timeoutMs: 45_000,
      intervalMs: 250,
    });
    for (const [route, body] of [
      ['output', { token, data: 'late' }],
      ['heartbeat', { token }],
      ['exit', { token, exitCode: 0, status: 'exited' }],
    ] as const) {
      const answer = await callApi(
        target.url,
        runnerKey,
        'POST',
        `/v1/runner/workspaces/st/processes/${started.processId}/${route}`,
        body,
      );
      expect({ route, status: answer.status, code: answer.body.error?.code }).toEqual({
        route,
        status: 409,
        code: 'conflict',
      });
    }
    expect((await statusOf(target, 'st', started.processId)).status).toBe('lost');
  });
});

describe('server restart', () => {
  it('a process running on a separate runner keeps its status and logs across a server restart', async () => {
    const port = String(await freePort());
    const dataDir = makeDataDir();
    cleanups.push(() => removeDir(dataDir));
    // A lease longer than a restart takes (wrangler dev's, on a loaded machine, can pass the
    // default 15 s): a lease that ran out before the server was back would rightly be lost.
    const lease = { PORT: port, TOOLGATE_LEASE_MS: '60000' };
    const first = await server(lease, dataDir);
    await first.call('PUT', '/v1/workspaces/rs');
    await runner(first);
    const started = (
      await first.call('POST', '/v1/workspaces/rs/tools/bash', {
        action: 'start',
        command: 'for i in $(seq 1 30); do echo "tick $i"; sleep 0.1; done',
      })
    ).body.result;
    await eventually(async () => (await statusOf(first, 'rs', started.processId)).status === 'running', {
      what: 'the process to run',
      intervalMs: 100,
    });
    await first.stop();
    const second = await server(lease, dataDir);
    expect(['running', 'exited']).toContain((await statusOf(second, 'rs', started.processId)).status);
    const record = await eventually(
      async () => {
        const current = await statusOf(second, 'rs', started.processId);
        return current.status !== 'running' && current;
      },
      { what: 'the process to end', intervalMs: 100 },
    );
    expect(record).toMatchObject({ status: 'exited', exitCode: 0 });
    const logs = (
      await second.call('POST', '/v1/workspaces/rs/tools/bash', { action: 'logs', processId: started.processId })
    ).body.result;
    expect(logs.data).toBe(Array.from({ length: 30 }, (_, i) => `tick ${i + 1}\n`).join(''));
  });
});

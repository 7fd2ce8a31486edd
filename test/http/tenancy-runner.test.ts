// docs/api.md Tenancy on the runner plane, over real HTTP on both homes: a runner key is handed only
// jobs of its scope, reads a workspace only under a live lease of its own on one of its jobs, and
// reports on a process only with that lease.
import { beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/runner/node/runner.ts';
import { eventually } from '../support/eventually.ts';
import { createKey, createRunnerKey, type TestKey } from '../support/keys.ts';
import { startRunner, type RunnerProcess } from '../support/runner-process.ts';
import { makeDataDir, removeDir, useServer, type ApiAnswer, type ServerProcess } from '../support/server-process.ts';

// Leases long enough that no test outruns one, and a second server whose leases run out at once.
const server = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_LEASE_MS: '600000' } });
const shortLeases = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_LEASE_MS: '1000' } });

const A = 'runner-tenant-a';
const B = 'runner-tenant-b';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ok(answer: Promise<ApiAnswer>, status = 200): Promise<any> {
  const settled = await answer;
  expect(settled.status, JSON.stringify(settled.body)).toBe(status);
  return settled.body;
}

async function start(target: ServerProcess, ws: string, command = 'true'): Promise<string> {
  return (await ok(target.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command }))).result
    .processId;
}

async function statusOf(target: ServerProcess, ws: string, processId: string): Promise<string> {
  return (await ok(target.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'status', processId }))).result
    .status;
}

/** What a runner key may read of a workspace: 200 with a lease, else the refusal. */
async function reads(key: TestKey, ws: string): Promise<number[]> {
  const hash = '0'.repeat(64);
  return [
    (await key.call('GET', `/v1/runner/workspaces/${ws}/manifest`)).status,
    (await key.call('POST', `/v1/runner/workspaces/${ws}/blobs`, { hashes: [hash] })).status,
    (await key.call('GET', `/v1/runner/workspaces/${ws}/blobs/${hash}`)).status,
  ];
}

async function leaseAs(
  key: TestKey,
  runnerId: string,
  waitMs = 0,
): Promise<{ processId: string; token: number; workspace: string } | undefined> {
  const answer = await key.call('POST', '/v1/runner/lease', { runnerId, waitMs });
  expect([200, 204], JSON.stringify(answer.body)).toContain(answer.status);
  return answer.status === 200 ? answer.body.job : undefined;
}

const report = (key: TestKey, ws: string, processId: string, route: string, body: unknown) =>
  key.call('POST', `/v1/runner/workspaces/${ws}/processes/${processId}/${route}`, body);

describe('a runner key scoped to one tenant', () => {
  let runnerA: TestKey;
  let runnerA2: TestKey;
  let runnerB: TestKey;

  beforeAll(async () => {
    for (const ws of [A, B]) await ok(server.call('PUT', `/v1/workspaces/${ws}`), 201);
    await ok(server.call('POST', `/v1/workspaces/${A}/tools/write_file`, { path: 'a.txt', content: 'a' }));
    runnerA = await createRunnerKey(server, [A]);
    runnerA2 = await createRunnerKey(server, [A]);
    runnerB = await createRunnerKey(server, [B]);
  });

  it("is never handed another tenant's job, in 20 leases, waiting or not", async () => {
    const processId = await start(server, B);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      expect(await leaseAs(runnerA, `a-${attempt}`, attempt % 5 === 0 ? 300 : 0)).toBeUndefined();
    }
    expect(await statusOf(server, B, processId)).toBe('queued');
    // B's own runner key takes it, and then reads B's workspace.
    const job = await leaseAs(runnerB, 'b-1');
    expect(job).toMatchObject({ processId, workspace: B });
    expect((await reads(runnerB, B))[0]).toBe(200);
    await ok(report(runnerB, B, processId, 'exit', { token: job!.token, exitCode: 0, status: 'exited' }));
  });

  it("answers another tenant's workspace as absent, lease or not", async () => {
    expect(await reads(runnerA, B)).toEqual([404, 404, 404]);
  });

  it('reads a workspace only while it holds a live lease on one of its jobs, and not after the exit', async () => {
    expect(await reads(runnerA, A)).toEqual([403, 403, 403]);
    const refused = await runnerA.call('GET', `/v1/runner/workspaces/${A}/manifest`);
    expect(refused.body.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/no live lease/) });

    const processId = await start(server, A);
    const job = (await leaseAs(runnerA, 'a-live'))!;
    expect(job.processId).toBe(processId);
    const manifest = await ok(runnerA.call('GET', `/v1/runner/workspaces/${A}/manifest`));
    expect(manifest.entries.map((entry: { path: string }) => entry.path)).toEqual(['a.txt']);
    // Another runner key of the same tenant holds no lease: it reads nothing, and the lease's token is no use to it.
    expect(await reads(runnerA2, A)).toEqual([403, 403, 403]);
    for (const [route, body] of [
      ['started', { token: job.token, pid: 1 }],
      ['output', { token: job.token, data: 'forged\n' }],
      ['heartbeat', { token: job.token }],
      [
        'sync',
        {
          token: job.token,
          changes: [{ op: 'write', path: 'forged.txt', contentBase64: 'Zm9yZ2Vk', baseVersion: null }],
        },
      ],
      ['exit', { token: job.token, exitCode: 0, status: 'exited' }],
    ] as const) {
      const answer = await report(runnerA2, A, processId, route, body);
      expect({ route, status: answer.status, code: answer.body.error?.code }).toEqual({
        route,
        status: 403,
        code: 'forbidden',
      });
    }
    expect(await statusOf(server, A, processId)).toBe('queued');
    expect((await server.call('POST', `/v1/workspaces/${A}/tools/read_file`, { path: 'forged.txt' })).status).toBe(404);

    await ok(report(runnerA, A, processId, 'exit', { token: job.token, exitCode: 0, status: 'exited' }));
    expect(await reads(runnerA, A)).toEqual([403, 403, 403]);
  });

  it('serves its own tenant as a real runner, and leaves the other tenant waiting', async () => {
    const dataDir = makeDataDir();
    let runner: RunnerProcess | undefined;
    try {
      runner = await startRunner(server.url, runnerA.secret, dataDir);
      const served = await ok(
        // On a runner: auto would answer these in the handler, with no runner needed.
        server.call('POST', `/v1/workspaces/${A}/tools/bash`, {
          action: 'exec',
          command: 'cat a.txt',
          engine: 'runner',
        }),
      );
      expect(served.result).toMatchObject({ exitCode: 0, stdout: 'a', engine: 'runner' });
      const waiting = await server.call('POST', `/v1/workspaces/${B}/tools/bash`, {
        action: 'exec',
        command: 'echo never',
        engine: 'runner',
        timeoutMs: 2000,
      });
      expect({ status: waiting.status, code: waiting.body.error?.code }).toEqual({ status: 503, code: 'unavailable' });
    } finally {
      await runner?.kill();
      removeDir(dataDir);
    }
  });

  it('is the only role the runner protocol serves: admin keys no longer lease or read', async () => {
    const admin = await createKey(server, { role: 'admin', workspaces: ['*'] });
    for (const key of [admin, { call: server.call }]) {
      const lease = await key.call('POST', '/v1/runner/lease', { runnerId: 'admin', waitMs: 0 });
      expect({ status: lease.status, code: lease.body.error?.code }).toEqual({ status: 403, code: 'forbidden' });
      expect(lease.body.error.message).toMatch(/role runner/);
    }
  });
});

describe('a runner reading a workspace slowly', () => {
  it('keeps its lease renewed while it prepares the copy, so its reads are never refused', async () => {
    const ws = 'slow-copy';
    await ok(shortLeases.call('PUT', `/v1/workspaces/${ws}`), 201);
    await ok(shortLeases.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path: 'a.txt', content: 'slow' }));
    const key = await createRunnerKey(shortLeases, [ws]);
    const dataDir = makeDataDir();
    // Every blob batch answers only after two leases' time: unrenewed, the lease would lapse before it.
    const transport = async (request: Request): Promise<Response> => {
      if (new URL(request.url).pathname.endsWith('/blobs')) await sleep(2500);
      return fetch(request);
    };
    const runner = new Runner({
      url: shortLeases.url,
      key: key.secret,
      dataDir,
      concurrency: 1,
      overlay: false,
      transport,
    });
    runner.start();
    try {
      const exec = await ok(
        shortLeases.call('POST', `/v1/workspaces/${ws}/tools/bash`, {
          action: 'exec',
          command: 'cat a.txt',
          timeoutMs: 30_000,
        }),
      );
      expect(exec.result).toMatchObject({ exitCode: 0, stdout: 'slow' });
    } finally {
      await runner.stop();
      removeDir(dataDir);
    }
  });
});

describe('after a lease ends by loss or by a newer lease', () => {
  let runnerA: TestKey;
  let runnerA2: TestKey;

  beforeAll(async () => {
    await ok(shortLeases.call('PUT', `/v1/workspaces/${A}`), 201);
    runnerA = await createRunnerKey(shortLeases, [A]);
    runnerA2 = await createRunnerKey(shortLeases, [A]);
  });

  it('refuses the reads and reports of a runner whose job was lost', async () => {
    const processId = await start(shortLeases, A, 'sleep 60');
    const job = (await leaseAs(runnerA, 'goes-silent'))!;
    await ok(report(runnerA, A, processId, 'started', { token: job.token, pid: 1 }));
    await eventually(async () => (await statusOf(shortLeases, A, processId)) === 'lost', {
      what: 'the silent runner’s job to be marked lost',
      intervalMs: 100,
    });
    expect(await reads(runnerA, A)).toEqual([403, 403, 403]);
    const late = await report(runnerA, A, processId, 'heartbeat', { token: job.token });
    expect({ status: late.status, code: late.body.error?.code }).toEqual({ status: 409, code: 'conflict' });
  });

  it('refuses the reads and reports of a runner whose lease ran out and went to another key', async () => {
    const processId = await start(shortLeases, A);
    const stale = (await leaseAs(runnerA, 'too-slow'))!;
    expect(stale.processId).toBe(processId);
    // Unstarted and unrenewed, the job goes back to the queue for another runner.
    let fresh: Awaited<ReturnType<typeof leaseAs>>;
    for (let attempt = 0; !(fresh = await leaseAs(runnerA2, 'in-time', 500)); attempt += 1) {
      if (attempt > 40) throw new Error('the job never came back to the queue');
    }
    expect(fresh.processId).toBe(processId);
    expect(await reads(runnerA, A)).toEqual([403, 403, 403]);
    const late = await report(runnerA, A, processId, 'started', { token: stale.token, pid: 1 });
    expect({ status: late.status, code: late.body.error?.code }).toEqual({ status: 409, code: 'conflict' });
    expect((await reads(runnerA2, A))[0]).toBe(200);
    await ok(report(runnerA2, A, processId, 'exit', { token: fresh.token, exitCode: 0, status: 'exited' }));
  });
});

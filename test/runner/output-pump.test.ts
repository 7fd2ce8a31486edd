// The runner's output pump against a real server (no runner of its own): what a command wrote
// arrives in the log exactly, a writer far ahead skips to the ring's tail, reading pauses and resumes.
import { beforeAll, describe, expect, it } from 'vitest';
import { OutputPump } from '../../src/runner/node/output-pump.ts';
import type { LeasedJob } from '../../src/contract/runner-protocol.ts';
import { RunnerClient, StaleLeaseError } from '../../src/runner/runner-client.ts';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, useServer, type ServerProcess } from '../support/server-process.ts';

const SMALL_RING = 4096;
const BIG_RING = 16 * 1024 * 1024;
const small = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: String(SMALL_RING) } });
const big = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: String(BIG_RING) } });

/** Each server's runner key: the runner protocol serves keys of role runner only. */
const runnerKeys = new Map<ServerProcess, string>();
const runnerKey = (server: ServerProcess): string => runnerKeys.get(server)!;

beforeAll(async () => {
  for (const server of [small, big]) {
    await server.call('PUT', '/v1/workspaces/pump');
    runnerKeys.set(server, (await createRunnerKey(server)).secret);
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Leases the job of a started process, as a runner does. */
async function lease(server: ServerProcess): Promise<LeasedJob> {
  const answer = await callApi(server.url, runnerKey(server), 'POST', '/v1/runner/lease', {
    runnerId: 'pump-test',
    waitMs: 5000,
  });
  const job = answer.body.job as LeasedJob;
  expect(
    (
      await callApi(
        server.url,
        runnerKey(server),
        'POST',
        `/v1/runner/workspaces/${job.workspace}/processes/${job.processId}/started`,
        { token: job.token, pid: 1 },
      )
    ).status,
  ).toBe(200);
  return job;
}

async function startedJob(server: ServerProcess): Promise<LeasedJob> {
  await server.call('POST', '/v1/workspaces/pump/tools/bash', { action: 'start', command: 'true' });
  return lease(server);
}

async function logs(server: ServerProcess, processId: string, offset: number, limit = 1_048_576): Promise<any> {
  return (await server.call('POST', '/v1/workspaces/pump/tools/bash', { action: 'logs', processId, offset, limit }))
    .body.result;
}

describe('a ring small enough to skip to', () => {
  it('delivers the exact tail of a writer far ahead, keeping surrogate pairs whole, and counts the skipped output', async () => {
    // Pieces of odd lengths made mostly of pairs, so the skips land inside pairs as often as not.
    for (const shape of [
      (i: number) => `${'x'.repeat(i % 3)}${'😀'.repeat(400 + (i % 7))}`,
      (i: number) => `${'😀'.repeat(300)}${i % 2 === 0 ? 'é' : 'ab'}`,
    ]) {
      const job = await startedJob(small);
      const pump = new OutputPump(new RunnerClient(small.url, runnerKey(small)), job, 1_048_576);
      let full = '';
      for (let i = 0; i < 400; i += 1) {
        const piece = shape(i);
        pump.add(i % 5 === 0 ? 'stderr' : 'stdout', piece);
        full += piece;
        // Let batches go out between bursts, so skipping happens mid-stream too.
        if (i % 25 === 24) await sleep(30);
      }
      await pump.close();
      const page = await logs(small, job.processId, 0);
      expect(page.nextOffset).toBe(full.length);
      expect(page.truncated).toBe(true);
      expect(page.offset).toBeLessThanOrEqual(full.length - SMALL_RING);
      expect(page.data).toBe(full.slice(page.offset));
    }
  });

  it('sends a small output whole, in order, after the command ends', async () => {
    const job = await startedJob(small);
    const pump = new OutputPump(new RunnerClient(small.url, runnerKey(small)), job, 1_048_576);
    const pieces = ['line 1\n', 'err 1\n', '😀\n', '', 'last'];
    for (const [i, piece] of pieces.entries()) pump.add(i === 1 ? 'stderr' : 'stdout', piece);
    await pump.close();
    expect(await logs(small, job.processId, 0)).toMatchObject({
      data: pieces.join(''),
      offset: 0,
      startOffset: 0,
      truncated: false,
    });
  });

  it('keeps an exec command’s streams apart, cut at the limit without splitting a pair, for its exit report', async () => {
    const exec = small.call('POST', '/v1/workspaces/pump/tools/bash', {
      action: 'exec',
      command: 'true',
      // A runner's job, which this test leases itself (auto would answer `true` in the handler).
      engine: 'runner',
      timeoutMs: 30_000,
    });
    const job = await lease(small);
    expect(job.mode).toBe('exec');
    const client = new RunnerClient(small.url, runnerKey(small));
    const pump = new OutputPump(client, job, 5);
    pump.add('stdout', 'abcd😀e');
    pump.add('stderr', 'err');
    await pump.close();
    expect(pump.execStreams()).toEqual({ stdout: 'abcd', stderr: 'err', truncated: true });
    await client.exit(job, job.token, { exitCode: 0, status: 'exited', ...pump.execStreams() });
    expect((await exec).body.result).toMatchObject({ exitCode: 0, stdout: 'abcd', stderr: 'err', truncated: true });
    expect((await logs(small, job.processId, 0)).data).toBe('abcd😀eerr');
  });

  it('hands a refused (stale) report to onStale', async () => {
    const job = await startedJob(small);
    const pump = new OutputPump(
      new RunnerClient(small.url, runnerKey(small)),
      { ...job, token: job.token + 1 },
      1_048_576,
    );
    const stale: unknown[] = [];
    pump.onStale = (error) => stale.push(error);
    pump.add('stdout', 'late');
    await pump.close();
    expect(stale).toHaveLength(1);
    expect(stale[0]).toBeInstanceOf(StaleLeaseError);
    expect((await logs(small, job.processId, 0)).nextOffset).toBe(0);
  });
});

describe('a ring bigger than a batch', () => {
  it('skips nothing, pauses reading while too much waits and resumes once it has drained', async () => {
    const job = await startedJob(big);
    const pump = new OutputPump(new RunnerClient(big.url, runnerKey(big)), job, 1_048_576);
    const pressure: boolean[] = [];
    pump.onPressure = (high) => pressure.push(high);
    const piece = `${'y'.repeat(65_000)}é😀\n`;
    const pieces = 200;
    for (let i = 0; i < pieces; i += 1) pump.add('stdout', piece);
    expect(pressure).toEqual([true]);
    await pump.close();
    expect(pressure).toEqual([true, false]);
    const total = piece.length * pieces;
    const first = await logs(big, job.processId, 0);
    expect(first).toMatchObject({ offset: 0, startOffset: 0, truncated: false });
    expect(first.data).toBe(piece.repeat(Math.ceil(1_048_576 / piece.length)).slice(0, first.data.length));
    // Every piece boundary is where it was written.
    for (const index of [1, 31, 32, 33, 100, pieces - 1]) {
      expect((await logs(big, job.processId, index * piece.length, piece.length)).data).toBe(piece);
    }
    expect((await logs(big, job.processId, total - 3, 10)).data).toBe('😀\n');
  });
});

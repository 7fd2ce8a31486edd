// Lease long-polls over real HTTP: a queued job wakes one waiting runner request, not every idle one.
import { beforeAll, describe, expect, it } from 'vitest';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, testHome, useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
let runnerKey = '';
beforeAll(async () => {
  runnerKey = (await createRunnerKey(server)).secret;
});

interface Poll {
  runnerId: string;
  answer: Promise<{ status: number; processId: string | undefined }>;
  abort: AbortController;
}

/** A runner's long-poll lease request, as `toolgate runner` sends it. */
function poll(runnerId: string, waitMs: number, key = runnerKey): Poll {
  const abort = new AbortController();
  const answer = fetch(`${server.url}/v1/runner/lease`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ runnerId, waitMs }),
    signal: abort.signal,
  }).then(async (response) => {
    const text = await response.text();
    if (response.status !== 200 && response.status !== 204)
      throw new Error(`lease answered ${response.status}: ${text}`);
    return {
      status: response.status,
      processId: text === '' ? undefined : (JSON.parse(text) as { job: { processId: string } }).job.processId,
    };
  });
  // An aborted poll's rejection is expected; it is awaited where it matters.
  answer.catch(() => undefined);
  return { runnerId, answer, abort };
}

/**
 * A round trip on another connection, sent after everything so far: by its answer the server's
 * event loop has turned past what arrived before it (polls taken in, a closed connection seen).
 */
const roundTrip = async () => expect((await server.call('GET', '/healthz')).status).toBe(200);

const start = async (ws: string) => {
  const started = await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' });
  expect(started.status).toBe(200);
  return started.body.result.processId as string;
};

describe('lease long-polls', () => {
  // The polls wait 30 s (the longest a lease may) and the test has 20 s: each is answered because a
  // job woke it, never because its time was up.
  it('a queued job is handed to one waiting request; the others keep waiting for the next jobs', async () => {
    const workspaces = ['lease-1', 'lease-2', 'lease-3', 'lease-4'];
    for (const ws of workspaces) await server.call('PUT', `/v1/workspaces/${ws}`);
    const waiting = ['r1', 'r2', 'r3', 'r4'].map((id) => poll(id, 30_000));
    await roundTrip();
    const handed: string[] = [];
    for (const ws of workspaces) {
      const processId = await start(ws);
      // Exactly one request answers for this job: had it woken every idle one, the rest would answer 204 with nothing.
      const index = await Promise.race(waiting.map((entry, at) => entry.answer.then(() => at)));
      const [answered] = waiting.splice(index, 1);
      expect(await answered!.answer).toEqual({ status: 200, processId });
      handed.push(processId);
    }
    expect(new Set(handed).size).toBe(4);
    // A request with no job to wake it answers 204 at the end of its wait.
    expect((await poll('idle', 200).answer).status).toBe(204);
    // Leased but not yet started: the processes are still queued.
    const status = await server.call('POST', '/v1/workspaces/lease-1/tools/bash', {
      action: 'status',
      processId: handed[0],
    });
    expect(status.body.result.status).toBe('queued');
  }, 20_000);

  // Not on the Cloudflare home: under wrangler dev a runner's hang-up does not reach the lease
  // request waiting in the Worker, so the next waiter is not handed the job and answers 204 at the
  // end of its wait.
  it.skipIf(testHome === 'worker')(
    'a job woken for a request whose runner hung up goes to the next waiting request',
    async () => {
      await server.call('PUT', '/v1/workspaces/lease-gone');
      // A key of this workspace alone: the jobs the other test leased and left, requeued once their
      // leases lapse, are not this one's.
      const scoped = (await createRunnerKey(server, ['lease-gone'])).secret;
      const gone = poll('gone', 20_000, scoped);
      await roundTrip();
      const next = poll('next', 20_000, scoped);
      await roundTrip();
      // The oldest waiter hangs up: the server learns it only when the job wakes it.
      gone.abort.abort();
      await expect(gone.answer).rejects.toThrow();
      // The server notices the closed connection when its event loop next turns; a job queued
      // before that would be handed to the closed request (and come back only when its lease expires).
      await roundTrip();
      const processId = await start('lease-gone');
      expect(await next.answer).toEqual({ status: 200, processId });
      // Nothing is left queued for a runner that will never run it.
      const again = await callApi(server.url, scoped, 'POST', '/v1/runner/lease', { runnerId: 'late', waitMs: 0 });
      expect(again.status).toBe(204);
    },
  );
});

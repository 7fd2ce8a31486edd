// Lease long-polls over real HTTP: a queued job wakes one waiting runner request, not every idle one.
import { beforeAll, describe, expect, it } from 'vitest';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
let runnerKey = '';
beforeAll(async () => {
  runnerKey = (await createRunnerKey(server)).secret;
});

interface Poll {
  runnerId: string;
  answer: Promise<{ status: number; at: number }>;
  abort: AbortController;
}

/** A runner's long-poll lease request, as `toolgate runner` sends it. */
function poll(runnerId: string, waitMs: number): Poll {
  const abort = new AbortController();
  const answer = fetch(`${server.url}/v1/runner/lease`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runnerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ runnerId, waitMs }),
    signal: abort.signal,
  }).then(async (response) => {
    await response.arrayBuffer();
    return { status: response.status, at: performance.now() };
  });
  // An aborted poll's rejection is expected; it is awaited where it matters.
  answer.catch(() => undefined);
  return { runnerId, answer, abort };
}

/** Whether the promise is still pending after the server has had `ms` to answer. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol('pending');
  return (await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(marker), ms))])) === marker;
}

/** Lets the server take in the polls sent so far, so they wait in the order they were sent. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe('lease long-polls', () => {
  it('a queued job is handed to one waiting request; the others keep waiting until their time is up', async () => {
    await server.call('PUT', '/v1/workspaces/lease-one');
    const polls = ['r1', 'r2', 'r3', 'r4'].map((id) => poll(id, 4_000));
    await settle();
    const sent = performance.now();
    const started = await server.call('POST', '/v1/workspaces/lease-one/tools/bash', { action: 'start', command: 'true' });
    expect(started.status).toBe(200);
    const first = await Promise.race(polls.map((entry) => entry.answer.then((answer) => ({ ...answer, runnerId: entry.runnerId }))));
    expect(first.status).toBe(200);
    expect(first.at - sent).toBeLessThan(2_000);
    const others = polls.filter((entry) => entry.runnerId !== first.runnerId);
    // None of the others was answered when the job arrived: they answer 204 at the end of their wait.
    for (const entry of others) expect(await pendingAfter(entry.answer, 200)).toBe(true);
    for (const entry of others) expect((await entry.answer).status).toBe(204);
    const status = await server.call('POST', '/v1/workspaces/lease-one/tools/bash', { action: 'status', processId: started.body.result.processId });
    expect(status.body.result.status).toBe('queued');
  });

  it('a job woken for a request whose runner hung up goes to the next waiting request', async () => {
    await server.call('PUT', '/v1/workspaces/lease-gone');
    const gone = poll('gone', 20_000);
    await settle();
    const next = poll('next', 20_000);
    await settle();
    // The oldest waiter hangs up: the server learns it only when the job wakes it.
    gone.abort.abort();
    await expect(gone.answer).rejects.toThrow();
    // The server notices the closed connection when its event loop next turns; a job queued
    // before that would be handed to the closed request (and come back only when its lease expires).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await server.call('POST', '/v1/workspaces/lease-gone/tools/bash', { action: 'start', command: 'true' });
    const answer = await next.answer;
    expect(answer.status).toBe(200);
    // Nothing is left queued for a runner that will never run it.
    const again = await callApi(server.url, runnerKey, 'POST', '/v1/runner/lease', { runnerId: 'late', waitMs: 0 });
    expect(again.status).toBe(204);
  });
});

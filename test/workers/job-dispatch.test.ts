// The Cloudflare home's job hand-off in workerd: the Queue delivers job ids at least once, and
// the workspace object, not the delivery, decides who runs a job, so a repeated delivery is harmless.

import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DISPATCHER_SHARDS, dispatcherShard } from '../../src/cloudflare/bindings.ts';
import { worker } from '../../src/cloudflare/worker-router.ts';
import { api, KEY } from './worker-api.ts';

/** Hands the consumer the same job message `times` times, as a Queue redelivering it would. */
async function deliver(workspace: string, jobId: string, times: number): Promise<void> {
  const messages = Array.from({ length: times }, (_, attempt) => ({
    id: `m-${jobId}-${attempt}`,
    timestamp: new Date(),
    attempts: attempt + 1,
    body: { workspace, jobId },
  }));
  const batch = createMessageBatch('toolgate-jobs-test', messages);
  const context = createExecutionContext();
  await worker.queue(batch, env as never);
  const result = await getQueueResult(batch, context);
  expect(result.retryMessages).toEqual([]);
  expect(result.explicitAcks).toHaveLength(times);
}

/**
 * Stops a job a test leased and never started: its lease would run out (TOOLGATE_LEASE_MS) and the
 * job be offered again, to a later test's runners.
 */
async function stop(workspace: string, processId: string): Promise<void> {
  const stopped = await api('POST', `/v1/workspaces/${workspace}/tools/bash`, { action: 'stop', processId });
  expect(stopped.body.result.status).toBe('stopped');
}

describe('job hand-off through the Queue', () => {
  it('leases a job delivered several times to one runner only', async () => {
    expect((await api('PUT', '/v1/workspaces/dispatch')).status).toBe(201);
    const started = await api('POST', '/v1/workspaces/dispatch/tools/bash', { action: 'start', command: 'true' });
    expect(started.status).toBe(200);
    const { processId } = started.body.result;
    // The object sent the job to the Queue itself; here it arrives three more times.
    await deliver('dispatch', processId, 3);
    const first = await api('POST', '/v1/runner/lease', { runnerId: 'runner-1', waitMs: 5000 });
    expect(first.status).toBe(200);
    expect(first.body.job).toMatchObject({ processId, workspace: 'dispatch', command: 'true', mode: 'start' });
    expect((await api('POST', '/v1/runner/lease', { runnerId: 'runner-2', waitMs: 0 })).status).toBe(204);
    // Delivered again after it was leased: the object refuses it, so no runner gets it.
    await deliver('dispatch', processId, 2);
    expect((await api('POST', '/v1/runner/lease', { runnerId: 'runner-3', waitMs: 200 })).status).toBe(204);
    const status = await api('POST', '/v1/workspaces/dispatch/tools/bash', { action: 'status', processId });
    expect(status.body.result.status).toBe('queued');
    await stop('dispatch', processId);
  });

  it('drops a job that no longer waits (stopped before any runner came) without handing it out', async () => {
    expect((await api('PUT', '/v1/workspaces/dropped')).status).toBe(201);
    const started = await api('POST', '/v1/workspaces/dropped/tools/bash', { action: 'start', command: 'sleep 5' });
    const { processId } = started.body.result;
    expect(
      (await api('POST', '/v1/workspaces/dropped/tools/bash', { action: 'stop', processId })).body.result.status,
    ).toBe('stopped');
    await deliver('dropped', processId, 2);
    expect((await api('POST', '/v1/runner/lease', { runnerId: 'runner-1', waitMs: 200 })).status).toBe(204);
  });

  it('never hands a job to a runner key scoped to other workspaces, however often it is delivered', async () => {
    expect((await api('PUT', '/v1/workspaces/tenant-b')).status).toBe(201);
    const scoped = await api('POST', '/v1/keys', { name: 'runner of a', role: 'runner', workspaces: ['tenant-a'] });
    expect(scoped.status).toBe(201);
    const started = await api('POST', '/v1/workspaces/tenant-b/tools/bash', { action: 'start', command: 'true' });
    const { processId } = started.body.result;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      await deliver('tenant-b', processId, 1);
      const lease = await api(
        'POST',
        '/v1/runner/lease',
        { runnerId: `scoped-${attempt}`, waitMs: 0 },
        scoped.body.secret,
      );
      expect(lease.status).toBe(204);
    }
    // An admin key no longer serves the runner protocol; the runner key in scope takes the job.
    expect((await api('POST', '/v1/runner/lease', { runnerId: 'admin', waitMs: 0 }, KEY)).status).toBe(403);
    const lease = await api('POST', '/v1/runner/lease', { runnerId: 'in-scope', waitMs: 1000 });
    expect(lease.body.job).toMatchObject({ processId, workspace: 'tenant-b' });
    await stop('tenant-b', processId);
  });

  it('refuses job offers and other internal calls from outside', async () => {
    const response = await SELF.fetch('https://toolgate.test/internal/offer', {
      method: 'POST',
      body: JSON.stringify({ workspace: 'dispatch', jobId: 'proc_x' }),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.code).toBe('not_found');
    // However the path is spelled, and whatever headers a caller forges, an internal route never answers from outside.
    for (const path of [
      '//internal/authenticate',
      '/v1/../internal/authenticate',
      '/%2e%2e/internal/authenticate',
      '/v1/workspaces/dispatch/../../../internal/authenticate',
    ]) {
      const forged = await SELF.fetch(`https://toolgate.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-toolgate-internal': '1' },
        body: JSON.stringify({ secret: KEY }),
      });
      expect([401, 404], path).toContain(forged.status);
      expect(JSON.stringify(await forged.json()), path).not.toContain('key_bootstrap_admin');
    }
  });
});

describe('job hand-off across dispatcher shards', () => {
  it('leases each job exactly once to runners spread over the shards, however often it is delivered', async () => {
    const workspaces = Array.from({ length: 6 }, (_, i) => `sharded-${i}`);
    const jobs: string[] = [];
    for (const ws of workspaces) {
      expect((await api('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
      for (let n = 0; n < 3; n += 1) {
        const started = await api('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' });
        expect(started.status).toBe(200);
        jobs.push(started.body.result.processId as string);
      }
    }
    // Redelivered while no runner waits: every shard then holds each job.
    for (const [index, processId] of jobs.entries()) await deliver(workspaces[Math.floor(index / 3)]!, processId, 2);
    const runners = Array.from({ length: 12 }, (_, i) => `spread-${i}`);
    expect(new Set(runners.map((id) => dispatcherShard(id))).size).toBeGreaterThan(4);
    const leased: string[] = [];
    await Promise.all(
      runners.map(async (runnerId) => {
        for (;;) {
          const lease = await api('POST', '/v1/runner/lease', { runnerId, waitMs: 0 });
          if (lease.status === 204) return;
          expect(lease.status).toBe(200);
          leased.push(lease.body.job.processId as string);
        }
      }),
    );
    expect([...leased].sort()).toEqual([...jobs].sort());
  });

  it('hands a job to a runner waiting on another shard than its workspace, once, also when delivered again', async () => {
    expect((await api('PUT', '/v1/workspaces/waited-for')).status).toBe(201);
    const home = dispatcherShard('waited-for');
    const runnerId = Array.from({ length: 64 }, (_, i) => `waiting-${i}`).find((id) => dispatcherShard(id) !== home)!;
    const waiting = api('POST', '/v1/runner/lease', { runnerId, waitMs: 20_000 });
    // The lease is waiting on its shard before the job exists (its object sends the job at once).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = await api('POST', '/v1/workspaces/waited-for/tools/bash', { action: 'start', command: 'true' });
    const { processId } = started.body.result;
    const lease = await waiting;
    expect(lease.status).toBe(200);
    expect(lease.body.job.processId).toBe(processId);
    await deliver('waited-for', processId, 3);
    const others = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api('POST', '/v1/runner/lease', { runnerId: `late-${i}`, waitMs: 0 })),
    );
    expect(others.map((other) => other.status)).toEqual(Array(8).fill(204));
  });

  it('drops, at a later look, the copies a shard holds of a job leased from another shard', async () => {
    expect((await api('PUT', '/v1/workspaces/copied-offers')).status).toBe(201);
    const started = await api('POST', '/v1/workspaces/copied-offers/tools/bash', { action: 'start', command: 'true' });
    const { processId } = started.body.result;
    // No runner waits: every shard holds the job.
    await deliver('copied-offers', processId, 1);
    const lease = await api('POST', '/v1/runner/lease', { runnerId: 'copier', waitMs: 1000 });
    expect(lease.body.job.processId).toBe(processId);
    const other = (dispatcherShard('copier') + 1) % DISPATCHER_SHARDS;
    const stub = env.DISPATCHER.get(env.DISPATCHER.idFromName(other === 0 ? 'dispatcher' : `dispatcher-${other}`));
    const copies = () =>
      runInDurableObject(stub, (_instance, state) =>
        Number(
          state.storage.sql.exec('SELECT COUNT(*) AS n FROM job_offers WHERE job_id = ?', processId).toArray()[0]!.n,
        ),
      );
    expect(await copies()).toBe(1);
    // The first look marks what it holds; the next asks about it.
    await runDurableObjectAlarm(stub);
    await runDurableObjectAlarm(stub);
    expect(await copies()).toBe(0);
  });
});

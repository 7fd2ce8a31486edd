// docs/api.md "Sandbox and resources": a running process's seconds count against a processSeconds
// quota as they accrue, and the process is stopped once the quota is spent; over real HTTP with
// a real runner, on both homes.
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createKey } from '../support/keys.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_PROCESS_ACCRUAL_MS: '500' } });

describe('a processSeconds quota', () => {
  it('counts a started process while it runs, stops it once spent, and refuses the next exec', async () => {
    expect((await server.call('PUT', '/v1/workspaces/metered')).status).toBe(201);
    const key = await createKey(server, {
      role: 'agent',
      workspaces: ['metered'],
      approvalMode: 'auto',
      quota: { processSeconds: 2, period: 'day' },
    });
    const unmetered = await createKey(server, { role: 'agent', workspaces: ['metered'], approvalMode: 'auto' });
    const bash = (who: typeof key, args: Record<string, unknown>) =>
      who.call('POST', '/v1/workspaces/metered/tools/bash', args);
    const started = await bash(key, { action: 'start', command: 'sleep 300' });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const beside = (await bash(unmetered, { action: 'start', command: 'sleep 300' })).body.result;
    const { processId } = started.body.result;
    await eventually(async () => (await bash(key, { action: 'status', processId })).body.result.status === 'stopped', {
      what: 'the process to be stopped',
      timeoutMs: 50_000,
      intervalMs: 100,
    });
    const usage = await server.call('GET', `/v1/usage?groupBy=key&keyId=${key.id}`);
    expect(usage.body.rows[0].processSeconds).toBeGreaterThanOrEqual(2);
    const refused = await bash(key, { action: 'exec', command: 'true' });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 402, code: 'quota_exceeded' });
    // A process of a key without that quota runs on.
    expect((await bash(unmetered, { action: 'status', processId: beside.processId })).body.result.status).toBe(
      'running',
    );
    await bash(unmetered, { action: 'stop', processId: beside.processId, graceMs: 0 });
  });
});

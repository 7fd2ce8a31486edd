// The runner protocol's sync-back over real HTTP: a retried sync (its answer lost) commits nothing
// again and answers as the first one did, with the entries as that commit made them.
import { beforeAll, describe, expect, it } from 'vitest';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, useServer } from '../support/server-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
let runnerKey = '';
beforeAll(async () => {
  runnerKey = (await createRunnerKey(server)).secret;
});
const runner = (path: string, body: unknown) => callApi(server.url, runnerKey, 'POST', path, body);

async function leaseJob(ws: string): Promise<{ processId: string; token: number }> {
  await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' });
  const leased = await runner('/v1/runner/lease', { runnerId: 'by-hand', waitMs: JOB_WAIT_MS });
  return leased.body.job;
}

describe('POST /v1/runner/workspaces/{ws}/processes/{id}/sync with a syncId', () => {
  it('answers a repeat as the first, without committing again or reporting its own changes as conflicts', async () => {
    await server.call('PUT', '/v1/workspaces/sync');
    const { processId, token } = await leaseJob('sync');
    const changes = [
      {
        op: 'write',
        path: 'a.txt',
        contentBase64: Buffer.from('from the command\n').toString('base64'),
        baseVersion: null,
      },
      { op: 'symlink', path: 'link', target: 'a.txt', baseVersion: null },
    ];
    const first = await runner(`/v1/runner/workspaces/sync/processes/${processId}/sync`, {
      token,
      changes,
      syncId: 'sync-1',
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ committed: ['a.txt', 'link'], conflicts: [], skipped: [] });
    const version = (await server.call('GET', '/v1/workspaces/sync')).body.version;
    expect(first.body.entries).toEqual([
      {
        path: 'a.txt',
        type: 'file',
        blob: expect.stringMatching(/^[0-9a-f]{64}$/),
        target: null,
        size: 17,
        version: first.body.version,
      },
      { path: 'link', type: 'symlink', blob: null, target: 'a.txt', size: 0, version: first.body.version },
    ]);
    // An API write lands after the sync; the retried sync must neither undo it nor claim it.
    await server.call('POST', '/v1/workspaces/sync/tools/write_file', { path: 'a.txt', content: 'from the api\n' });
    const repeat = await runner(`/v1/runner/workspaces/sync/processes/${processId}/sync`, {
      token,
      changes,
      syncId: 'sync-1',
    });
    expect(repeat.body).toEqual(first.body);
    expect((await server.call('GET', '/v1/workspaces/sync')).body.version).toBe(version + 1);
    expect(
      (await server.call('POST', '/v1/workspaces/sync/tools/read_file', { path: 'a.txt' })).body.result.content,
    ).toBe('from the api\n');
    // Without the id (or with another), the same changes are judged afresh: the file is now a conflict.
    const again = await runner(`/v1/runner/workspaces/sync/processes/${processId}/sync`, {
      token,
      changes,
      syncId: 'sync-2',
    });
    expect(again.body.conflicts).toEqual(['a.txt', 'link']);
  });

  it('refuses a stale token before looking at the id', async () => {
    await server.call('PUT', '/v1/workspaces/sync-stale');
    const { processId, token } = await leaseJob('sync-stale');
    const answer = await runner(`/v1/runner/workspaces/sync-stale/processes/${processId}/sync`, {
      token: token + 1,
      changes: [],
      syncId: 'x',
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('conflict');
  });
});

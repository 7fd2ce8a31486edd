// Fills a workspace through the runner protocol's sync, the one HTTP route that takes any bytes and
// makes symlinks: a process is started and its job leased by hand (the server under test runs no
// runner of its own for this, TOOLGATE_RUNNER=off).
import { expect } from 'vitest';
import { createRunnerKey } from './keys.ts';
import { callApi, type ServerProcess } from './server-process.ts';

/**
 * How long a test playing a runner waits for a job it just started to be leased: at once on the
 * Node home; on the Cloudflare home the job reaches the dispatcher through the Queue a moment
 * later, and a lease asked with `waitMs: 0` can come back empty (seen in CI). The lease answers as
 * soon as the job is there.
 */
export const JOB_WAIT_MS = 20_000;

/** A change as the sync route takes it: a file's bytes, a symlink, or an empty directory. */
export type SyncedChange =
  | { op: 'write'; path: string; bytes: Uint8Array }
  | { op: 'symlink'; path: string; target: string }
  | { op: 'mkdir'; path: string };

export async function syncWorkspaceChanges(
  server: Pick<ServerProcess, 'url' | 'call'>,
  ws: string,
  changes: readonly SyncedChange[],
): Promise<void> {
  const runnerKey = (await createRunnerKey(server)).secret;
  await server.call('PUT', `/v1/workspaces/${ws}`);
  await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' });
  const leased = await callApi(server.url, runnerKey, 'POST', '/v1/runner/lease', {
    runnerId: 'by-hand',
    waitMs: JOB_WAIT_MS,
  });
  expect(leased.body.job, JSON.stringify(leased.body)).toBeDefined();
  const { processId, token } = leased.body.job;
  const synced = await callApi(
    server.url,
    runnerKey,
    'POST',
    `/v1/runner/workspaces/${ws}/processes/${processId}/sync`,
    {
      token,
      changes: changes.map((change) => {
        if (change.op === 'write')
          return {
            op: 'write',
            path: change.path,
            contentBase64: Buffer.from(change.bytes).toString('base64'),
            baseVersion: null,
          };
        if (change.op === 'symlink') return { ...change, baseVersion: null };
        return change;
      }),
    },
  );
  expect(synced.status, JSON.stringify(synced.body)).toBe(200);
  // The process ends, so syncs after this one are not held back by processes left running.
  const ended = await callApi(
    server.url,
    runnerKey,
    'POST',
    `/v1/runner/workspaces/${ws}/processes/${processId}/exit`,
    { token, exitCode: 0, status: 'exited' },
  );
  expect(ended.status, JSON.stringify(ended.body)).toBe(200);
}

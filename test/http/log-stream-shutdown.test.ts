// A log stream open while the Node server stops gracefully keeps its one usage record: the stop ends
// the stream, and the record is committed before the database closes, as the next start shows.
import { afterAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { openStream } from '../support/event-stream.ts';
import { createKey } from '../support/keys.ts';
import { makeDataDir, removeDir, startServer, testHome } from '../support/server-process.ts';

const dataDir = makeDataDir();
afterAll(() => removeDir(dataDir));

// The Cloudflare home has no graceful stop of its own: wrangler dev ends its objects as a crash
// would, and a crash may lose the record of a call still answering (docs/api.md Metering).
it.skipIf(testHome === 'worker')('records a stream cut short by a graceful stop exactly once', async () => {
  const first = await startServer({ dataDir });
  await first.call('PUT', '/v1/workspaces/shutdown');
  const key = await createKey(first, { role: 'agent', workspaces: ['shutdown'], approvalMode: 'auto' });
  const started = await first.call('POST', '/v1/workspaces/shutdown/tools/bash', {
    action: 'start',
    command: 'echo up; read x',
  });
  const processId = started.body.result.processId;
  const stream = await openStream(first.url, key.secret, `/v1/workspaces/shutdown/processes/${processId}/logs/stream`);
  await stream.until((event) => event.event === 'output');
  await first.stop();
  // The stop closes every connection: the stream ends, cut off (no exit event: the process ran on).
  expect(await stream.next().catch(() => undefined)).toBeUndefined();

  const second = await startServer({ dataDir });
  try {
    const usage = await eventually(async () => {
      const rows = (await second.call('GET', `/v1/usage?groupBy=tool&keyId=${key.id}`)).body.rows;
      return rows.length > 0 && rows;
    });
    expect(usage).toEqual([expect.objectContaining({ group: 'bash:logs', calls: 1, errors: 0 })]);
  } finally {
    await second.stop();
  }
});

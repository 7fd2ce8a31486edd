// The in-process runner's transport: requests reach the app's handler directly, and an abort ends them at once.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { readNodeConfig } from '../../src/node/config.ts';
import { createNodeHome, startNodeServer } from '../../src/node/server.ts';
import { inProcessTransport, RunnerClient } from '../../src/runner/runner-client.ts';
import { eventually } from '../support/eventually.ts';
import { removeDir } from '../support/server-process.ts';

describe('inProcessTransport', () => {
  it('hands the request to the handler as sent and answers its response', async () => {
    const app = new Hono();
    app.post('/echo', async (c) =>
      c.json({ method: c.req.method, auth: c.req.header('authorization'), body: await c.req.json() }, 201),
    );
    const transport = inProcessTransport(app.fetch);
    const response = await transport(
      new Request('http://runner.invalid/echo', {
        method: 'POST',
        headers: { authorization: 'Bearer k' },
        body: '{"a":1}',
      }),
    );
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ method: 'POST', auth: 'Bearer k', body: { a: 1 } });
  });

  it('rejects at once when the request is aborted, and the handler sees the abort', async () => {
    const app = new Hono();
    let sawAbort = false;
    app.post('/wait', async (c) => {
      await new Promise<void>((resolve) => c.req.raw.signal.addEventListener('abort', () => resolve(), { once: true }));
      sawAbort = c.req.raw.signal.aborted;
      return c.body(null, 204);
    });
    const abort = new AbortController();
    const answer = inProcessTransport(app.fetch)(
      new Request('http://runner.invalid/wait', { method: 'POST', signal: abort.signal }),
    );
    setTimeout(() => abort.abort(), 50);
    await expect(answer).rejects.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sawAbort).toBe(true);
  });

  // The runner's long-polls wait 20 s: were close to wait them out, this test would outlast its own 10 s timeout.
  it('lets a server with its in-process runner close while the runner waits for jobs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-transport-'));
    try {
      const config = readNodeConfig({
        TOOLGATE_DATA: dataDir,
        TOOLGATE_API_KEY: 'tg_transport_test_key_0123456789abcdef',
        PORT: '0',
      });
      const home = await createNodeHome(config);
      let waiting = false;
      const waitForJob = home.processes.waitForJob.bind(home.processes);
      home.processes.waitForJob = (...args) => {
        waiting = true;
        return waitForJob(...args);
      };
      const server = await startNodeServer(config, home);
      await eventually(() => waiting, { what: 'the runner to wait for a job' });
      await server.close();
    } finally {
      removeDir(dataDir);
    }
  }, 10_000);

  it('carries the runner protocol: RunnerClient over it leases nothing from an empty queue', async () => {
    const app = new Hono();
    app.post('/v1/runner/lease', (c) => c.body(null, 204));
    const client = new RunnerClient('http://runner.invalid', 'key', 0, inProcessTransport(app.fetch));
    expect(await client.lease('r', 0)).toBeUndefined();
  });
});

// The streams let go of what they listen to: the app in this process on real drivers, served over real
// HTTP on loopback, so the process store's and the approvals' listener counts can be read as clients
// open streams, drop them abruptly, and see them end. Output comes in through the process store's
// runner side, as a runner's reports would bring it. (The Cloudflare home runs the same route code in
// its objects, where no count can be read from outside: log-stream.test.ts shows it stays up there.)
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCallServices, type CallServices } from '../../src/calls/call-services.ts';
import { createApp } from '../../src/http/app.ts';
import { ProcessStore } from '../../src/processes/process-store.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';
import { eventually } from '../support/eventually.ts';
import { openStream, readLogToExit, type OpenedStream } from '../support/event-stream.ts';
import { callApi, TEST_KEY } from '../support/server-process.ts';

const WS = 'release';
const HOLDER = { keyId: 'runner-key', workspaces: ['*'] };
let processes: ProcessStore;
let services: CallServices;
let server: ServerType;
let url: string;

beforeAll(async () => {
  const db = SqliteDatabase.memory();
  const workspaces = new Workspaces(db, new MemoryObjectStore());
  const tools = new ToolRegistry(builtinTools);
  const limits = {
    maxBodyBytes: 1024 * 1024,
    maxFileBytes: 1024 * 1024,
    defaultReadMaxChars: 20_000,
    edgeMemoryBytes: 256 * 1024 * 1024,
  };
  processes = new ProcessStore(db);
  services = createCallServices({ db, tools, workspaces, limits, processes });
  await services.keys.ensureBootstrapAdmin(TEST_KEY);
  const app = createApp({ workspaces, tools, limits, processes, ...services });
  server = await new Promise<ServerType>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  expect((await callApi(url, TEST_KEY, 'PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
});

afterAll(async () => {
  services?.calls.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

/** A started process, leased and running, and how to report its output and its end. */
async function runningProcess() {
  const started = await callApi(url, TEST_KEY, 'POST', `/v1/workspaces/${WS}/tools/bash`, {
    action: 'start',
    command: 'reported by the test',
  });
  const processId = started.body.result.processId as string;
  const lease = processes.leaseJob(processId, 'test-runner', HOLDER);
  if (typeof lease !== 'object') throw new Error(`no lease: ${lease}`);
  const fence = { token: lease.token, keyId: HOLDER.keyId };
  processes.started(processId, fence, 4242);
  let offset = 0;
  return {
    processId,
    write(text: string) {
      offset = processes.appendOutput(processId, fence, text, offset);
    },
    end() {
      processes.finish(processId, fence, { exitCode: 0, status: 'exited' });
    },
  };
}

const firstOutput = (stream: OpenedStream) => stream.until((event) => event.event === 'output');

describe('streams release their listeners', () => {
  it('a log stream dropped by its client, or ended by the exit, leaves no listener behind', async () => {
    const process = await runningProcess();
    process.write('hello\n');
    const before = processes.changeListeners;
    const path = `/v1/workspaces/${WS}/processes/${process.processId}/logs/stream`;
    const dropped = await Promise.all(Array.from({ length: 10 }, () => openStream(url, TEST_KEY, path)));
    await Promise.all(dropped.map(firstOutput));
    expect(processes.changeListeners).toBe(before + 10);
    for (const stream of dropped) stream.close();
    await eventually(() => processes.changeListeners === before, { what: 'the dropped streams to let go' });

    const followed = await Promise.all(Array.from({ length: 5 }, () => openStream(url, TEST_KEY, path)));
    await Promise.all(followed.map(firstOutput));
    expect(processes.changeListeners).toBe(before + 5);
    process.write('more\n');
    process.end();
    const read = await Promise.all(followed.map((stream) => readLogToExit(stream)));
    for (const one of read) expect(one.text).toBe('more\n');
    await eventually(() => processes.changeListeners === before, { what: 'the ended streams to let go' });
  });

  it('an approvals stream dropped by its client stops watching', async () => {
    const before = services.calls.approvalWatchers;
    const streams = await Promise.all(
      Array.from({ length: 5 }, () => openStream(url, TEST_KEY, '/v1/approvals/stream')),
    );
    expect(streams.map((stream) => stream.status)).toEqual([200, 200, 200, 200, 200]);
    await eventually(() => services.calls.approvalWatchers === before + 5, { what: 'the streams to watch' });
    for (const stream of streams) stream.close();
    await eventually(() => services.calls.approvalWatchers === before, { what: 'the streams to let go' });
  });
});

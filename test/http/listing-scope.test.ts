// The Cloudflare home serves a key's usage, approval listing and approvals stream from the key's own
// object, which asks the workspace objects in the key's scope and no other: the directory and the
// workspaces outside the scope serve none of its requests (each object counts what it serves,
// TOOLGATE_COUNT_OBJECT_REQUESTS). And a tool call asks its key's object once. docs/scale.md names
// these paths.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/core/server-events.ts';
import { openStream } from '../support/event-stream.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { objectRequests } from '../support/object-requests.ts';
import { callApi, testHome, useServer } from '../support/server-process.ts';

const IN = ['scope-in-a', 'scope-in-b'];
const OUT = ['scope-out-c', 'scope-out-d'];

// The Node home is one process with no objects.
describe.skipIf(testHome !== 'worker')('listings bounded by the caller’s scope (Cloudflare home)', () => {
  const server = useServer({ env: { TOOLGATE_COUNT_OBJECT_REQUESTS: 'on', TOOLGATE_RUNNER: 'off' } });
  /** Each workspace's object, by the id its storage is kept under. */
  const objectOf = new Map<string, string>();
  let askerIn: TestKey;
  let askerOut: TestKey;
  let approverIn: TestKey;

  /** Requests served so far, by object id. */
  const counts = () => new Map(objectRequests(server.dataDir).map((object) => [object.id, object]));

  /** The objects that served requests since `before`, by class, with the workspaces named. */
  function servedSince(before: ReturnType<typeof counts>) {
    const served: string[] = [];
    for (const [id, object] of counts()) {
      if (object.requests === (before.get(id)?.requests ?? 0)) continue;
      const workspace = [...objectOf].find(([, objectId]) => objectId === id)?.[0];
      served.push(workspace ?? object.objectClass);
    }
    return served.sort();
  }

  beforeAll(async () => {
    for (const ws of [...IN, ...OUT]) {
      const before = counts();
      expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
      const created = [...counts().values()].find(
        (object) => object.objectClass === 'WorkspaceObject' && !before.has(object.id),
      );
      objectOf.set(ws, created!.id);
      expect(
        (await server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path: 'f.txt', content: ws })).status,
      ).toBe(200);
    }
    askerIn = await createKey(server, { name: 'asker in', role: 'agent', workspaces: IN, approvalMode: 'manual' });
    askerOut = await createKey(server, { name: 'asker out', role: 'agent', workspaces: OUT, approvalMode: 'manual' });
    approverIn = await createKey(server, { name: 'approver in', role: 'approver', workspaces: IN });
    for (const [key, ws] of [
      [askerIn, IN[0]],
      [askerOut, OUT[0]],
    ] as const)
      expect((await key.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path: 'f.txt' })).status).toBe(202);
  }, 300_000);

  it('answers usage and approvals from the workspaces in scope, asking no object outside it', async () => {
    const before = counts();
    // An approver's usage is its own calls (none here); what matters is whom it asked.
    const usage = await approverIn.call('GET', '/v1/usage?groupBy=workspace');
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    const approvals = await approverIn.call('GET', '/v1/approvals?status=pending');
    expect(approvals.status).toBe(200);
    expect(approvals.body.approvals.map((approval: { workspace: string }) => approval.workspace)).toEqual([IN[0]]);
    // The approver's own object, and the workspaces of its scope: no directory, nothing outside.
    expect(servedSince(before)).toEqual(['KeyObject', ...IN].sort());
  });

  it('streams the approvals of its scope only, and the others never reach its object', async () => {
    const before = counts();
    const stream = await openStream(server.url, approverIn.secret, '/v1/approvals/stream');
    expect(stream.status).toBe(200);
    try {
      expect(servedSince(before)).toEqual(['KeyObject', ...IN].sort());
      // An approval outside the scope: its workspace tells no key object, as none of its scope streams.
      const outside = counts();
      expect((await askerOut.call('POST', `/v1/workspaces/${OUT[1]}/tools/read_file`, { path: 'f.txt' })).status).toBe(
        202,
      );
      expect(servedSince(outside)).toEqual(['KeyObject', OUT[1]].sort());
      // One inside reaches the stream, and it is the first event there.
      const inside = await askerIn.call('POST', `/v1/workspaces/${IN[1]}/tools/read_file`, { path: 'f.txt' });
      expect(inside.status).toBe(202);
      const first = await stream.until((event: ServerEvent) => event.event === 'approval');
      expect(JSON.parse(first!.data).id).toBe(inside.body.approval.id);
    } finally {
      stream.close();
    }
  });

  it('refuses a listing without a live key, and one with bad input, asking no workspace', async () => {
    const before = counts();
    expect((await callApi(server.url, undefined, 'GET', '/v1/usage')).status).toBe(401);
    expect((await callApi(server.url, 'tg_not_a_key', 'GET', '/v1/approvals')).status).toBe(401);
    expect((await callApi(server.url, 'x'.repeat(600), 'GET', '/v1/approvals/stream')).status).toBe(401);
    const badGroup = await approverIn.call('GET', '/v1/usage?groupBy=../../etc');
    expect(badGroup.status).toBe(400);
    expect(badGroup.body.error.code).toBe('invalid_argument');
    expect((await approverIn.call('GET', '/v1/approvals?limit=100000')).body.error.code).toBe('invalid_argument');
    expect((await approverIn.call('GET', '/v1/approvals/apr_none')).status).toBe(404);
    const runner = await createKey(server, { name: 'runner', role: 'runner', workspaces: IN });
    expect((await runner.call('GET', '/v1/usage')).status).toBe(403);
    expect(servedSince(before).filter((name) => [...IN, ...OUT].includes(name))).toEqual([]);
  });

  it('asks a key’s object once a tool call, rate limit and quota together, once a workspace holds its copy', async () => {
    const limited = await createKey(server, {
      name: 'limited',
      role: 'agent',
      workspaces: IN,
      approvalMode: 'auto',
      quota: { calls: 1000, period: 'day' },
      rateLimitPerMinute: 1000,
    });
    const read = () => limited.call('POST', `/v1/workspaces/${IN[0]}/tools/read_file`, { path: 'f.txt' });
    // The first call authenticates (the workspace object holds no copy yet), then admits.
    expect((await read()).status).toBe(200);
    const before = counts();
    for (let call = 0; call < 5; call += 1) expect((await read()).status).toBe(200);
    const keyObjects = [...counts()].filter(([id, object]) => object.objectClass === 'KeyObject' && before.has(id));
    const asked = keyObjects
      .map(([id, object]) => object.requests - before.get(id)!.requests)
      .filter((requests) => requests > 0);
    expect(asked).toEqual([5]);
    expect(servedSince(before)).toEqual(['KeyObject', IN[0]]);
  });

  it('walks the registry for a key whose scope is every workspace', async () => {
    const before = counts();
    const usage = await server.call('GET', '/v1/usage?groupBy=workspace');
    expect(usage.status).toBe(200);
    expect(usage.body.rows.map((row: { group: string }) => row.group)).toEqual([...IN, ...OUT].sort());
    expect(servedSince(before)).toEqual(['DirectoryObject', 'KeyObject', ...IN, ...OUT].sort());
  });
});

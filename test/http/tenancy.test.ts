// docs/api.md Tenancy over real HTTP, on both homes: keys of the four roles scoped to tenant A, against
// every route the server documents (its OpenAPI document, which openapi.test.ts holds equal to the
// app's routes). In scope every route works as before; out of scope it answers 404 as if absent
// (403 where the role alone rules it out), says nothing about the scope, and changes nothing of B.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createRunnerKey, type TestKey } from '../support/keys.ts';
import { callApi, useServer, type ApiAnswer } from '../support/server-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_LEASE_MS: '3600000' } });

const A = 'tenant-a';
/** A second workspace of tenant A, for the deletion that works in scope. */
const A2 = 'tenant-a2';
const B = 'tenant-b';
const CONTENT = 'tenant content\n';
const roles = ['agent', 'approver', 'admin', 'runner'] as const;
type Role = (typeof roles)[number];

/** What each tenant holds, so every route has something real to name. */
interface Tenant {
  ws: string;
  checkpoint: string;
  /** A queued process: B's waits for a runner for the whole file; A's is leased by A's runner key. */
  processId: string;
  token: number;
  /** Pending approvals: one for the approver to decide, one for the admin, and one left pending. */
  approvals: string[];
  hook: string;
  /** A key of the tenant that its admin may revoke. */
  spareKey: string;
}

const keys = {} as Record<Role, TestKey>;
let tenantA: Tenant;
let tenantB: Tenant;
const blob = createHash('sha256').update(CONTENT).digest('hex');

/** A request one route gets: in scope it names tenant A's things, out of scope tenant B's. */
interface RouteCase {
  method: string;
  /** The OpenAPI path this case exercises. */
  route: string;
  request: (tenant: Tenant, role: Role) => { path: string; body?: unknown; headers?: Record<string, string> };
  /** The status in scope, per role. */
  inScope: Record<Role, number>;
  /** Out of scope: the status per role, or a check of what a listing shows. */
  outOfScope: Record<Role, number> | ((answer: ApiAnswer, role: Role) => void);
  /** A Server-Sent Events route: only the answer's status and head are read, then the stream is dropped. */
  stream?: true;
}

const userOnly = (ok: number): Record<Role, number> => ({ agent: ok, approver: ok, admin: ok, runner: 403 });
const adminOnly = (ok: number): Record<Role, number> => ({ agent: 403, approver: 403, admin: ok, runner: 403 });
const runnerOnly = (ok: number): Record<Role, number> => ({ agent: 403, approver: 403, admin: 403, runner: ok });
/** A workspace route out of scope: absent to user roles, refused by role to runner keys. */
const absent = userOnly(404);
const absentToRunner = runnerOnly(404);
const noneOf = (text: string) => (answer: ApiAnswer, role: Role) => {
  if (answer.status === 403) return expect(role).toBe('runner');
  expect(answer.status).toBe(200);
  expect(JSON.stringify(answer.body)).not.toContain(text);
};

const cases: RouteCase[] = [
  {
    method: 'PUT',
    route: '/v1/workspaces/{ws}',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'PUT',
    route: '/v1/workspaces/{ws}',
    request: (t, role) => ({ path: `/v1/workspaces/${t.ws}`, body: { excludedPaths: [`secret-${role}`] } }),
    inScope: adminOnly(200),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}/files',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/files?recursive=true` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}/archive',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/archive` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  // An empty tar (its two zero blocks), merged: in scope it is applied and changes nothing.
  {
    method: 'PUT',
    route: '/v1/workspaces/{ws}/archive',
    request: (t) => ({
      path: `/v1/workspaces/${t.ws}/archive`,
      body: '\u0000'.repeat(1024),
      headers: { 'content-type': 'application/x-tar' },
    }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  // A fork onto an existing name: in scope the route gets as far as the name taken (409).
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/fork',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/fork`, body: { to: t.ws } }),
    inScope: userOnly(409),
    outOfScope: absent,
  },
  // From tenant A's own workspace into a name of the other tenant: refused before any lookup.
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/fork',
    request: (t) => ({ path: `/v1/workspaces/${A}/fork`, body: { to: t.ws } }),
    inScope: userOnly(409),
    outOfScope: { agent: 403, approver: 403, admin: 403, runner: 403 },
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/checkpoints',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/checkpoints`, body: { message: 'matrix' } }),
    inScope: userOnly(201),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}/checkpoints',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/checkpoints` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}/diff',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/diff?from=${t.checkpoint}` }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/restore',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/restore`, body: { checkpoint: t.checkpoint } }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  // A scheme no import takes: in scope the route answers the argument error, so the key got past its scope.
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/import',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/import`, body: { git: { url: 'ftp://example.invalid/r.git' } } }),
    inScope: userOnly(400),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/read_file',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/tools/read_file`, body: { path: 'a.txt' } }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/write_file',
    request: (t, role) => ({
      path: `/v1/workspaces/${t.ws}/tools/write_file`,
      body: { path: `by-${role}.txt`, content: 'x' },
    }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/apply_patch',
    request: (t, role) => ({
      path: `/v1/workspaces/${t.ws}/tools/apply_patch`,
      body: { patch: `*** Begin Patch\n*** Add File: patched-${role}.txt\n+x\n*** End Patch\n` },
    }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/bash',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/tools/bash`, body: { action: 'status', processId: t.processId } }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/grep',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/tools/grep`, body: { pattern: '.', outputMode: 'content' } }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/tools/glob',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/tools/glob`, body: { pattern: '**' } }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/workspaces/{ws}/mcp',
    request: (t) => ({
      path: `/v1/workspaces/${t.ws}/mcp`,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    }),
    inScope: userOnly(200),
    outOfScope: absent,
  },
  {
    method: 'GET',
    route: '/v1/workspaces/{ws}/processes/{id}/logs/stream',
    request: (t) => ({ path: `/v1/workspaces/${t.ws}/processes/${t.processId}/logs/stream` }),
    inScope: userOnly(200),
    outOfScope: absent,
    stream: true,
  },
  {
    method: 'GET',
    route: '/v1/tools',
    request: () => ({ path: '/v1/tools' }),
    inScope: { agent: 200, approver: 200, admin: 200, runner: 200 },
    outOfScope: (answer) => expect(answer.status).toBe(200),
  },
  {
    method: 'GET',
    route: '/v1/approvals',
    request: () => ({ path: '/v1/approvals' }),
    inScope: userOnly(200),
    outOfScope: noneOf(B),
  },
  // What each stream shows (never another tenant's approvals) is approvals-stream.test.ts's; here, who may open one.
  {
    method: 'GET',
    route: '/v1/approvals/stream',
    request: () => ({ path: '/v1/approvals/stream' }),
    inScope: userOnly(200),
    outOfScope: userOnly(200),
    stream: true,
  },
  // An agent key sees only its own approvals; these were asked for by another agent key of the tenant.
  {
    method: 'GET',
    route: '/v1/approvals/{id}',
    request: (t) => ({ path: `/v1/approvals/${t.approvals[2]}` }),
    inScope: { agent: 404, approver: 200, admin: 200, runner: 403 },
    outOfScope: absent,
  },
  {
    method: 'POST',
    route: '/v1/approvals/{id}/decision',
    request: (t, role) => ({
      path: `/v1/approvals/${t.approvals[role === 'admin' ? 1 : 0]}/decision`,
      body: { decision: 'reject', reason: 'matrix' },
    }),
    inScope: { agent: 403, approver: 200, admin: 200, runner: 403 },
    outOfScope: { agent: 403, approver: 404, admin: 404, runner: 403 },
  },
  {
    method: 'POST',
    route: '/v1/keys',
    request: (t) => ({ path: '/v1/keys', body: { name: 'made in the matrix', role: 'agent', workspaces: [t.ws] } }),
    inScope: adminOnly(201),
    outOfScope: adminOnly(403),
  },
  {
    method: 'GET',
    route: '/v1/keys',
    request: () => ({ path: '/v1/keys' }),
    inScope: { agent: 200, approver: 200, admin: 200, runner: 200 },
    outOfScope: noneOf(B),
  },
  {
    method: 'DELETE',
    route: '/v1/keys/{id}',
    request: (t) => ({ path: `/v1/keys/${t.spareKey}` }),
    inScope: adminOnly(204),
    outOfScope: adminOnly(404),
  },
  {
    method: 'GET',
    route: '/v1/usage',
    request: () => ({ path: '/v1/usage?groupBy=workspace' }),
    inScope: userOnly(200),
    outOfScope: noneOf(B),
  },
  {
    method: 'PUT',
    route: '/v1/hooks/{hookId}',
    request: (t) => ({ path: `/v1/hooks/${t.hook}`, body: { secret: 'a hook secret of sixteen+', workspace: A } }),
    inScope: adminOnly(200),
    outOfScope: adminOnly(404),
  },
  {
    method: 'PUT',
    route: '/v1/hooks/{hookId}',
    request: (t) => ({ path: '/v1/hooks/new-hook', body: { secret: 'a hook secret of sixteen+', workspace: t.ws } }),
    inScope: adminOnly(201),
    outOfScope: adminOnly(404),
  },
  {
    method: 'GET',
    route: '/v1/hooks/{hookId}',
    request: (t) => ({ path: `/v1/hooks/${t.hook}` }),
    inScope: adminOnly(200),
    outOfScope: adminOnly(404),
  },
  {
    method: 'DELETE',
    route: '/v1/hooks/{hookId}',
    request: (t) => ({ path: `/v1/hooks/${t.hook}` }),
    inScope: adminOnly(204),
    outOfScope: adminOnly(404),
  },
  {
    method: 'GET',
    route: '/v1/hooks',
    request: () => ({ path: '/v1/hooks' }),
    inScope: adminOnly(200),
    outOfScope: (answer, role) => (role === 'admin' ? noneOf(B)(answer, role) : expect(answer.status).toBe(403)),
  },
  {
    method: 'GET',
    route: '/v1/runner/workspaces/{ws}/manifest',
    request: (t) => ({ path: `/v1/runner/workspaces/${t.ws}/manifest` }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  {
    method: 'GET',
    route: '/v1/runner/workspaces/{ws}/blobs/{hash}',
    request: (t) => ({ path: `/v1/runner/workspaces/${t.ws}/blobs/${blob}` }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  {
    method: 'POST',
    route: '/v1/runner/workspaces/{ws}/blobs',
    request: (t) => ({ path: `/v1/runner/workspaces/${t.ws}/blobs`, body: { hashes: [blob] } }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  ...(['started', 'output', 'heartbeat', 'sync'] as const).map((report): RouteCase => ({
    method: 'POST',
    route: `/v1/runner/workspaces/{ws}/processes/{id}/${report}`,
    request: (t) => ({
      path: `/v1/runner/workspaces/${t.ws}/processes/${t.processId}/${report}`,
      body: reportBody(report, t.token),
    }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  })),
  {
    method: 'PUT',
    route: '/v1/runner/workspaces/{ws}/processes/{id}/blobs/{hash}',
    request: (t) => ({
      path: `/v1/runner/workspaces/${t.ws}/processes/${t.processId}/blobs/${blob}?token=${t.token}&offset=0&size=${CONTENT.length}`,
      body: CONTENT,
      headers: { 'content-type': 'application/octet-stream' },
    }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  {
    method: 'POST',
    route: '/v1/runner/workspaces/{ws}/processes/{id}/blobs',
    // One frame: the id, the length as 8 bytes big-endian (all but the last byte zero), the content; all ASCII, so sent as text.
    request: (t) => ({
      path: `/v1/runner/workspaces/${t.ws}/processes/${t.processId}/blobs?token=${t.token}`,
      body: `${blob}${'\u0000'.repeat(7)}${String.fromCharCode(CONTENT.length)}${CONTENT}`,
      headers: { 'content-type': 'application/octet-stream' },
    }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  // The lease: B's job waits all along, and no key of A is ever handed it (nor is A's, leased already).
  {
    method: 'POST',
    route: '/v1/runner/lease',
    request: () => ({ path: '/v1/runner/lease', body: { runnerId: 'matrix', waitMs: 0 } }),
    inScope: runnerOnly(204),
    outOfScope: runnerOnly(204),
  },
  // Last: the exit ends A's lease, and a deletion ends A2.
  {
    method: 'POST',
    route: '/v1/runner/workspaces/{ws}/processes/{id}/exit',
    request: (t) => ({
      path: `/v1/runner/workspaces/${t.ws}/processes/${t.processId}/exit`,
      body: reportBody('exit', t.token),
    }),
    inScope: runnerOnly(200),
    outOfScope: absentToRunner,
  },
  {
    method: 'DELETE',
    route: '/v1/workspaces/{ws}',
    request: (t) => ({ path: `/v1/workspaces/${t.ws === A ? A2 : t.ws}` }),
    inScope: adminOnly(204),
    outOfScope: absent,
  },
];

/** Routes no key reaches: public ones (the console's page and assets among them), and webhook deliveries, which their signature authenticates (hooks.test.ts). */
const keyless = [
  'GET /healthz',
  'GET /openapi.json',
  'GET /docs',
  'GET /console',
  'GET /console/app.js',
  'GET /console/app.css',
  'GET /console/icon.svg',
  'POST /v1/hooks/{hookId}',
];

function reportBody(report: string, token: number): unknown {
  if (report === 'started') return { token, pid: 1 };
  if (report === 'output') return { token, data: 'out\n', offset: 0 };
  if (report === 'heartbeat') return { token };
  if (report === 'sync')
    return {
      token,
      changes: [
        { op: 'write', path: 'synced.txt', contentBase64: Buffer.from('synced').toString('base64'), baseVersion: null },
      ],
    };
  return { token, exitCode: 0, status: 'exited' };
}

/** A case's request as `key`: a stream's answer is read up to its head, then dropped. */
async function callCase(key: TestKey, routeCase: RouteCase, tenant: Tenant, role: Role): Promise<ApiAnswer> {
  const { path, body, headers } = routeCase.request(tenant, role);
  if (!routeCase.stream) return key.call(routeCase.method, path, body, headers);
  const abort = new AbortController();
  const response = await fetch(server.url + path, {
    headers: { authorization: `Bearer ${key.secret}`, ...headers },
    signal: abort.signal,
  });
  if (response.status === 200) {
    abort.abort();
    return { status: 200, headers: response.headers, body: '' };
  }
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function ok(answer: Promise<ApiAnswer>, status = 200): Promise<any> {
  const settled = await answer;
  expect(settled.status, JSON.stringify(settled.body)).toBe(status);
  return settled.body;
}

/** A tenant with a file, a checkpoint, a queued process, pending approvals, a hook and a spare key. */
async function makeTenant(ws: string): Promise<Tenant> {
  await ok(server.call('PUT', `/v1/workspaces/${ws}`), 201);
  await ok(server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path: 'a.txt', content: CONTENT }));
  const checkpoint = (await ok(server.call('POST', `/v1/workspaces/${ws}/checkpoints`, {}), 201)).id;
  const processId = (
    await ok(server.call('POST', `/v1/workspaces/${ws}/tools/bash`, { action: 'start', command: 'true' }))
  ).result.processId;
  const asker = await createKey(server, {
    name: `asker of ${ws}`,
    role: 'agent',
    workspaces: [ws],
    approvalMode: 'manual',
  });
  const approvals: string[] = [];
  for (let i = 0; i < 3; i += 1)
    approvals.push(
      (await ok(asker.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path: 'a.txt' }), 202)).approval.id,
    );
  const hook = `hook-${ws}`;
  await ok(server.call('PUT', `/v1/hooks/${hook}`, { secret: 'a hook secret of sixteen+', workspace: ws }), 201);
  const spareKey = (await createKey(server, { name: `spare of ${ws}`, role: 'agent', workspaces: [ws] })).id;
  return { ws, checkpoint, processId, token: 0, approvals, hook, spareKey };
}

/** Everything of tenant B another tenant could change, as B's own admin sees it. */
async function fingerprint(): Promise<unknown> {
  const get = async (path: string) => (await server.call('GET', path)).body;
  const keyList = (await get('/v1/keys')).keys
    .filter((key: { workspaces: string[] }) => key.workspaces.includes(B))
    .map((key: { id: string }) => key.id);
  // Calls of A's keys on B (the fingerprint's own calls are the bootstrap admin's).
  const usage = await Promise.all(
    roles.map(
      async (role) =>
        (await get(`/v1/usage?groupBy=workspace&keyId=${keys[role].id}`)).rows.find(
          (row: { group: string }) => row.group === B,
        ) ?? null,
    ),
  );
  return {
    info: await get(`/v1/workspaces/${B}`),
    files: await get(`/v1/workspaces/${B}/files?recursive=true`),
    checkpoints: await get(`/v1/workspaces/${B}/checkpoints`),
    processes: (await server.call('POST', `/v1/workspaces/${B}/tools/bash`, { action: 'list' })).body.result.processes,
    approvals: await Promise.all(tenantB.approvals.map((id) => get(`/v1/approvals/${id}`))),
    hook: await get(`/v1/hooks/${tenantB.hook}`),
    keys: keyList,
    usage,
  };
}

beforeAll(async () => {
  tenantB = await makeTenant(B);
  tenantA = await makeTenant(A);
  await ok(server.call('PUT', `/v1/workspaces/${A2}`), 201);
  for (const role of ['agent', 'approver', 'admin'] as const) {
    keys[role] = await createKey(server, {
      name: `${role} of A`,
      role,
      workspaces: [A, A2],
      ...(role === 'agent' ? { approvalMode: 'auto' } : {}),
    });
  }
  keys.runner = await createRunnerKey(server, [A, A2]);
  // A's runner key leases A's job (B's older job is never handed to it) and holds that lease.
  const lease = await ok(
    keys.runner.call('POST', '/v1/runner/lease', { runnerId: 'tenant-a-runner', waitMs: JOB_WAIT_MS }),
  );
  expect(lease.job.processId).toBe(tenantA.processId);
  tenantA.token = lease.job.token;
}, 120_000);

describe('a key scoped to one tenant', () => {
  it('has a case for every route the server documents', async () => {
    const doc = (await callApi(server.url, undefined, 'GET', '/openapi.json')).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const covered = new Set([...cases.map((c) => `${c.method} ${c.route}`), ...keyless]);
    expect(documented.filter((route) => !covered.has(route))).toEqual([]);
  });

  it('reaches nothing of another tenant on any route, in any role, and changes nothing of it', async () => {
    const before = await fingerprint();
    const wrong: string[] = [];
    for (const routeCase of cases) {
      for (const role of roles) {
        const { path } = routeCase.request(tenantB, role);
        const answer = await callCase(keys[role], routeCase, tenantB, role);
        const where = `${role} ${routeCase.method} ${path}: ${answer.status} ${String(JSON.stringify(answer.body)).slice(0, 300)}`;
        if (typeof routeCase.outOfScope === 'function') {
          try {
            routeCase.outOfScope(answer, role);
          } catch (error) {
            wrong.push(`${where} (${(error as Error).message.split('\n')[0]})`);
          }
          continue;
        }
        const expected = routeCase.outOfScope[role];
        if (answer.status !== expected) {
          wrong.push(`${where} (expected ${expected})`);
          continue;
        }
        if (answer.status === 404) {
          // Absent, exactly: the contract's error body, and not a word about scope.
          if (
            answer.body?.error?.code !== 'not_found' ||
            /scope|outside|forbidden|allowed/i.test(answer.body.error.message)
          )
            wrong.push(`${where} (a 404 must read as absent)`);
        } else if (answer.status === 403) {
          if (answer.body?.error?.code !== 'forbidden' || !/role|scope|admin/i.test(answer.body.error.message))
            wrong.push(`${where} (a 403 must name what the key lacks)`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await fingerprint()).toEqual(before);
    // B's job still waits for a runner of its own.
    const status = await server.call('POST', `/v1/workspaces/${B}/tools/bash`, {
      action: 'status',
      processId: tenantB.processId,
    });
    expect(status.body.result.status).toBe('queued');
  });

  it('works as before in its own tenant, in every role', async () => {
    const wrong: string[] = [];
    for (const routeCase of cases) {
      for (const role of roles) {
        const { path } = routeCase.request(tenantA, role);
        const answer = await callCase(keys[role], routeCase, tenantA, role);
        if (answer.status !== routeCase.inScope[role])
          wrong.push(
            `${role} ${routeCase.method} ${path}: ${answer.status} (expected ${routeCase.inScope[role]}) ${String(JSON.stringify(answer.body)).slice(0, 300)}`,
          );
      }
    }
    expect(wrong).toEqual([]);
  });
});

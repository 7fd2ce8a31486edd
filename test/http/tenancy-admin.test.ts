// docs/api.md Tenancy on the admin plane and a workspace's lifecycle, over real HTTP on both homes: an
// admin key manages only what lies within its scope and cannot widen itself by any route; changing
// a workspace's settings and deleting it need an admin key.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, type TestKey } from '../support/keys.ts';
import { useServer, type ApiAnswer } from '../support/server-process.ts';

const server = useServer();

const A = 'admin-tenant-a';
const B = 'admin-tenant-b';
const HOOK_SECRET = 'a hook secret of sixteen+';

async function ok(answer: Promise<ApiAnswer>, status = 200): Promise<any> {
  const settled = await answer;
  expect(settled.status, JSON.stringify(settled.body)).toBe(status);
  return settled.body;
}

function refused(answer: ApiAnswer, status: number, code: string, message?: RegExp): void {
  expect({ status: answer.status, code: answer.body?.error?.code }, JSON.stringify(answer.body)).toEqual({
    status,
    code,
  });
  if (message) expect(answer.body.error.message).toMatch(message);
}

/** The keys as the bootstrap admin (scope `*`) sees them. */
async function allKeys(): Promise<{ id: string; role: string; workspaces: string[] }[]> {
  return (await ok(server.call('GET', '/v1/keys'))).keys;
}

let adminA: TestKey;

beforeAll(async () => {
  for (const ws of [A, B]) await ok(server.call('PUT', `/v1/workspaces/${ws}`), 201);
  adminA = await createKey(server, { name: 'admin of A', role: 'admin', workspaces: [A] });
});

describe('a scoped admin key', () => {
  it('creates keys only within its scope, and names what it may not grant', async () => {
    const before = await allKeys();
    for (const workspaces of [['*'], [B], [A, B], ['*', A]]) {
      for (const role of ['admin', 'agent', 'runner']) {
        refused(
          await adminA.call('POST', '/v1/keys', { name: 'wider', role, workspaces }),
          403,
          'forbidden',
          /only within its own scope \(admin-tenant-a\)/,
        );
      }
    }
    expect(await allKeys()).toEqual(before);
    const within = await ok(adminA.call('POST', '/v1/keys', { name: 'within', role: 'admin', workspaces: [A] }), 201);
    expect(within.workspaces).toEqual([A]);
    // A key it made cannot reach further than its maker either.
    const made = await server.call('GET', '/v1/keys');
    expect(made.body.keys.find((key: { id: string }) => key.id === within.id).workspaces).toEqual([A]);
    const second = await ok(
      adminA.call('POST', '/v1/keys', { name: 'runner of A', role: 'runner', workspaces: [A] }),
      201,
    );
    expect(second.role).toBe('runner');
  });

  it('lists and revokes only keys whose whole scope lies within its own', async () => {
    const inA = await createKey(server, { name: 'agent of A', role: 'agent', workspaces: [A] });
    const inB = await createKey(server, { name: 'agent of B', role: 'agent', workspaces: [B] });
    const spanning = await createKey(server, { name: 'agent of A and B', role: 'agent', workspaces: [A, B] });
    const everywhere = await createKey(server, { name: 'agent of all', role: 'agent', workspaces: ['*'] });
    const listed = (await ok(adminA.call('GET', '/v1/keys'))).keys.map((key: { id: string }) => key.id);
    expect(listed).toContain(inA.id);
    expect(listed).toContain(adminA.id);
    for (const outside of [inB.id, spanning.id, everywhere.id, 'key_bootstrap_admin', 'key_bootstrap_runner'])
      expect(listed).not.toContain(outside);
    for (const outside of [inB.id, spanning.id, everywhere.id, 'key_bootstrap_admin', 'key_bootstrap_runner']) {
      refused(await adminA.call('DELETE', `/v1/keys/${outside}`), 404, 'not_found');
    }
    for (const key of [inB, spanning, everywhere]) expect((await key.call('GET', '/v1/keys')).status).toBe(200);
    expect(await ok(adminA.call('DELETE', `/v1/keys/${inA.id}`), 204)).toBeUndefined();
    expect((await inA.call('GET', '/v1/keys')).status).toBe(401);
  });

  it('has no route that changes its own key', async () => {
    for (const method of ['PUT', 'PATCH', 'POST']) {
      const answer = await adminA.call(method, `/v1/keys/${adminA.id}`, { workspaces: ['*'] });
      expect(answer.status).toBe(404);
    }
    const self = (await ok(adminA.call('GET', '/v1/keys'))).keys.find((key: { id: string }) => key.id === adminA.id);
    expect(self.workspaces).toEqual([A]);
  });

  it("cannot take over or re-point another tenant's hook, nor point its own hook outside", async () => {
    await ok(server.call('PUT', '/v1/hooks/hook-of-b', { secret: HOOK_SECRET, workspace: B }), 201);
    await ok(adminA.call('PUT', '/v1/hooks/hook-of-a', { secret: HOOK_SECRET, workspace: A }), 201);
    refused(
      await adminA.call('PUT', '/v1/hooks/hook-of-b', { secret: 'the attacker secret 1234', workspace: A }),
      404,
      'not_found',
    );
    refused(await adminA.call('PUT', '/v1/hooks/hook-of-a', { secret: HOOK_SECRET, workspace: B }), 404, 'not_found');
    refused(await adminA.call('PUT', '/v1/hooks/new-of-a', { secret: HOOK_SECRET, workspace: B }), 404, 'not_found');
    refused(await adminA.call('GET', '/v1/hooks/hook-of-b'), 404, 'not_found');
    refused(await adminA.call('DELETE', '/v1/hooks/hook-of-b'), 404, 'not_found');
    expect((await ok(server.call('GET', '/v1/hooks/hook-of-b'))).workspace).toBe(B);
    expect((await ok(server.call('GET', '/v1/hooks/hook-of-a'))).workspace).toBe(A);
    expect((await server.call('GET', '/v1/hooks/new-of-a')).status).toBe(404);
    expect((await ok(adminA.call('GET', '/v1/hooks'))).hooks.map((hook: { id: string }) => hook.id)).toEqual([
      'hook-of-a',
    ]);
  });

  it('reads usage of the workspaces in its scope only, whoever made the calls', async () => {
    const everywhere = await createKey(server, {
      name: 'busy agent',
      role: 'agent',
      workspaces: ['*'],
      approvalMode: 'auto',
    });
    for (const ws of [A, B, B])
      await ok(everywhere.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path: 'u.txt', content: 'u' }));
    const byWorkspace = (await ok(adminA.call('GET', '/v1/usage?groupBy=workspace'))).rows.map(
      (row: { group: string }) => row.group,
    );
    expect(byWorkspace).toEqual([A]);
    const byKey = (await ok(adminA.call('GET', `/v1/usage?groupBy=key&keyId=${everywhere.id}`))).rows;
    expect(byKey).toEqual([expect.objectContaining({ group: everywhere.id, calls: 1 })]);
    // The agent itself sees all of its own calls.
    expect(
      (await ok(everywhere.call('GET', '/v1/usage?groupBy=workspace'))).rows.map((row: { group: string }) => row.group),
    ).toEqual([A, B]);
  });

  it('cannot revoke the keys the server manages; the * admin is told why', async () => {
    refused(await server.call('DELETE', '/v1/keys/key_bootstrap_runner'), 403, 'forbidden', /TOOLGATE_RUNNER=off/);
    refused(await server.call('DELETE', '/v1/keys/key_bootstrap_admin'), 403, 'forbidden', /TOOLGATE_API_KEY/);
  });
});

describe("a workspace's lifecycle", () => {
  const W = 'lifecycle';
  let agent: TestKey;
  let approver: TestKey;
  let readOnly: TestKey;
  let admin: TestKey;

  beforeAll(async () => {
    const scope = [W, `${W}-new`];
    agent = await createKey(server, { name: 'agent', role: 'agent', workspaces: scope, approvalMode: 'auto' });
    approver = await createKey(server, { name: 'approver', role: 'approver', workspaces: scope });
    readOnly = await createKey(server, {
      name: 'reader',
      role: 'agent',
      workspaces: scope,
      tools: ['read_file'],
      approvalMode: 'manual',
    });
    admin = await createKey(server, { name: 'admin', role: 'admin', workspaces: scope });
    await ok(admin.call('PUT', `/v1/workspaces/${W}`, { excludedPaths: ['secret'] }), 201);
    await ok(agent.call('POST', `/v1/workspaces/${W}/tools/write_file`, { path: 'kept.txt', content: 'kept' }));
  });

  const denied = async () =>
    (await agent.call('POST', `/v1/workspaces/${W}/tools/write_file`, { path: 'secret/x', content: 'x' })).body.error
      ?.code;

  it('lets any key in scope confirm a workspace or create one, settings included', async () => {
    for (const key of [agent, approver, readOnly]) {
      expect((await key.call('PUT', `/v1/workspaces/${W}`)).status).toBe(200);
      expect((await key.call('PUT', `/v1/workspaces/${W}`, { excludedPaths: ['secret'] })).status).toBe(200);
    }
    expect((await agent.call('PUT', `/v1/workspaces/${W}-new`, { excludedPaths: ['private'] })).status).toBe(201);
  });

  it('needs an admin key to change the settings of an existing workspace, and changes nothing without one', async () => {
    for (const key of [agent, approver, readOnly]) {
      for (const settings of [{ excludedPaths: [] }, { excludedPaths: ['other'] }, { autoCheckpoint: true }]) {
        refused(
          await key.call('PUT', `/v1/workspaces/${W}`, settings),
          403,
          'forbidden',
          /^Changing the settings of workspace lifecycle .*needs a key with the role admin/,
        );
      }
    }
    expect(await denied()).toBe('path_denied');
    expect((await admin.call('PUT', `/v1/workspaces/${W}`, { excludedPaths: ['secret', 'more'] })).status).toBe(200);
    expect(await denied()).toBe('path_denied');
  });

  it("gives a workspace made again under a name none of the deleted one's files, at the same version too", async () => {
    const name = 'reborn';
    const exec = async (command: string) =>
      (await ok(server.call('POST', `/v1/workspaces/${name}/tools/bash`, { action: 'exec', command }))).result;
    await ok(server.call('PUT', `/v1/workspaces/${name}`), 201);
    await ok(server.call('POST', `/v1/workspaces/${name}/tools/write_file`, { path: 'old.txt', content: 'old' }));
    expect((await exec('ls')).stdout).toBe('old.txt\n');
    const before = (await ok(server.call('GET', `/v1/workspaces/${name}`))).version;
    await ok(server.call('DELETE', `/v1/workspaces/${name}`), 204);
    await ok(server.call('PUT', `/v1/workspaces/${name}`), 201);
    await ok(server.call('POST', `/v1/workspaces/${name}/tools/write_file`, { path: 'new.txt', content: 'new' }));
    expect((await ok(server.call('GET', `/v1/workspaces/${name}`))).version).toBe(before);
    expect((await exec('ls -A')).stdout).toBe('new.txt\n');
  });

  it('needs an admin key to delete a workspace, and keeps it whole without one', async () => {
    for (const key of [agent, approver, readOnly])
      refused(
        await key.call('DELETE', `/v1/workspaces/${W}`),
        403,
        'forbidden',
        /^Deleting workspace lifecycle needs a key with the role admin/,
      );
    expect(
      (await ok(agent.call('POST', `/v1/workspaces/${W}/tools/read_file`, { path: 'kept.txt' }))).result.content,
    ).toBe('kept');
    expect(await ok(admin.call('DELETE', `/v1/workspaces/${W}`), 204)).toBeUndefined();
    refused(await agent.call('GET', `/v1/workspaces/${W}`), 404, 'not_found');
  });
});

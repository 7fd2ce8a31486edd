// docs/api.md Keys over real HTTP: creation (secret shown once, stored hashed), listing, revocation,
// roles, and the scope matrix of keys × workspaces × tools.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, type TestKey } from '../support/keys.ts';
import { callApi, TEST_KEY, useServer } from '../support/server-process.ts';

const server = useServer();
const secrets: string[] = [TEST_KEY];

async function key(body: Record<string, unknown>): Promise<TestKey> {
  const created = await createKey(server, body);
  secrets.push(created.secret);
  if (created.notifySecret) secrets.push(created.notifySecret);
  return created;
}

describe('POST /v1/keys', () => {
  it('answers 201 with the key and its secret, shown this once and stored only as a hash', async () => {
    const answer = await server.call('POST', '/v1/keys', { name: 'ci agent', role: 'agent', workspaces: ['alpha'] });
    expect(answer.status).toBe(201);
    const body = answer.body;
    secrets.push(body.secret);
    expect(body).toMatchObject({
      name: 'ci agent',
      role: 'agent',
      workspaces: ['alpha'],
      tools: null,
      approvalMode: 'safe',
    });
    expect(body.id).toMatch(/^key_/);
    expect(body.secret).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(body.createdAt)).not.toBeNaN();
    const listed = await server.call('GET', '/v1/keys');
    const mine = listed.body.keys.find((entry: { id: string }) => entry.id === body.id);
    expect(mine).toMatchObject({ id: body.id, name: 'ci agent' });
    expect(JSON.stringify(listed.body)).not.toContain(body.secret);
    expect(mine.secret).toBeUndefined();
    // The stored data (SQLite of either home) holds the SHA-256 of the secret, never the secret.
    const files = readdirSync(server.dataDir, { recursive: true, withFileTypes: true }).filter(
      (entry) => entry.isFile() && entry.name !== 'admin-key' && !entry.name.endsWith('.env'),
    );
    const stored = files.map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1')).join('');
    expect(stored).not.toContain(body.secret);
    expect(stored).toContain(createHash('sha256').update(body.secret).digest('hex'));
  });

  it('gives approver and admin keys the mode auto and agent keys safe unless told', async () => {
    const approver = await key({ role: 'approver', workspaces: ['*'] });
    const listed = await server.call('GET', '/v1/keys');
    expect(listed.body.keys.find((entry: { id: string }) => entry.id === approver.id).approvalMode).toBe('auto');
    const manual = await server.call('POST', '/v1/keys', {
      name: 'm',
      role: 'agent',
      workspaces: ['*'],
      approvalMode: 'manual',
    });
    secrets.push(manual.body.secret);
    expect(manual.body.approvalMode).toBe('manual');
  });

  it('refuses bad keys with invalid_argument naming the field', async () => {
    const bad: [unknown, RegExp][] = [
      [{ name: 'x', role: 'boss', workspaces: ['*'] }, /role/],
      [{ name: 'x', role: 'agent', workspaces: [] }, /workspaces/],
      [{ name: 'x', role: 'agent', workspaces: ['Not Valid'] }, /workspaces/],
      [{ name: 'x', role: 'agent', workspaces: ['*'], tools: ['read_flie'] }, /read_flie/],
      [{ name: 'x', role: 'agent', workspaces: ['*'], tools: ['bash:run'] }, /bash:run/],
      [
        {
          name: 'x',
          role: 'agent',
          workspaces: ['*'],
          rules: [{ tool: 'read_file', action: 'exec', decision: 'allow' }],
        },
        /only bash has actions/,
      ],
      [{ name: 'x', role: 'agent', workspaces: ['*'], quota: { period: 'day' } }, /calls or processSeconds/],
      [{ name: 'x', role: 'agent', workspaces: ['*'], quota: { calls: 5, period: 'week' } }, /period/],
      [{ name: 'x', role: 'agent', workspaces: ['*'], notifyUrl: 'ftp://example.invalid/' }, /notifyUrl/],
      [{ name: 'x', role: 'agent', workspaces: ['*'], colour: 'red' }, /colour/],
      [{ name: 'x', role: 'runner', workspaces: ['*'], tools: ['read_file'] }, /runner/],
    ];
    for (const [body, message] of bad) {
      const answer = await server.call('POST', '/v1/keys', body);
      expect({ body, status: answer.status, code: answer.body.error?.code }).toEqual({
        body,
        status: 400,
        code: 'invalid_argument',
      });
      expect(answer.body.error.message).toMatch(message);
    }
  });

  it('needs the admin role', async () => {
    for (const role of ['agent', 'approver', 'runner']) {
      const other = await key({ role, workspaces: ['*'] });
      const answer = await other.call('POST', '/v1/keys', { name: 'x', role: 'admin', workspaces: ['*'] });
      expect({ role, status: answer.status, code: answer.body.error.code }).toEqual({
        role,
        status: 403,
        code: 'forbidden',
      });
      expect((await other.call('DELETE', `/v1/keys/${other.id}`)).status).toBe(403);
    }
  });
});

describe('GET /v1/keys and DELETE /v1/keys/{id}', () => {
  it('shows a non-admin key only itself', async () => {
    const agent = await key({ role: 'agent', workspaces: ['alpha'] });
    const answer = await agent.call('GET', '/v1/keys');
    expect(answer.status).toBe(200);
    expect(answer.body.keys.map((entry: { id: string }) => entry.id)).toEqual([agent.id]);
  });

  it('revokes at once: the next request with the key is 401', async () => {
    await server.call('PUT', '/v1/workspaces/revoked');
    const agent = await key({ role: 'agent', workspaces: ['*'], approvalMode: 'auto' });
    expect((await agent.call('GET', '/v1/workspaces/revoked')).status).toBe(200);
    expect((await server.call('DELETE', `/v1/keys/${agent.id}`)).status).toBe(204);
    const after = await agent.call('GET', '/v1/workspaces/revoked');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('unauthorized');
    expect((await server.call('DELETE', `/v1/keys/${agent.id}`)).status).toBe(404);
    const listed = await server.call('GET', '/v1/keys');
    expect(listed.body.keys.some((entry: { id: string }) => entry.id === agent.id)).toBe(false);
  });

  it('keeps the bootstrap admin key, which rotates through TOOLGATE_API_KEY', async () => {
    const answer = await server.call('DELETE', '/v1/keys/key_bootstrap_admin');
    expect(answer.status).toBe(403);
    expect(answer.body.error.message).toMatch(/TOOLGATE_API_KEY/);
  });

  it('gives a runner key no tool calls or workspace routes', async () => {
    await server.call('PUT', '/v1/workspaces/alpha');
    const runner = await key({ role: 'runner', workspaces: ['*'] });
    for (const [method, path, body] of [
      ['POST', '/v1/workspaces/alpha/tools/read_file', { path: 'x' }],
      ['GET', '/v1/workspaces/alpha', undefined],
    ] as const) {
      const answer = await runner.call(method, path, body);
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('forbidden');
    }
  });
});

describe('scope: three keys × three workspaces × four tools', () => {
  const workspaces = ['scope-a', 'scope-b', 'scope-c'];
  const tools = ['read_file', 'write_file', 'apply_patch', 'bash'] as const;
  let calls = 0;
  const argumentsFor = (tool: (typeof tools)[number]) => {
    calls += 1;
    switch (tool) {
      case 'read_file':
        return { path: 'seed.txt' };
      case 'write_file':
        return { path: `written-${calls}.txt`, content: 'x' };
      case 'apply_patch':
        return { patch: `*** Begin Patch\n*** Add File: patched-${calls}.txt\n+y\n*** End Patch\n` };
      case 'bash':
        return { action: 'exec', command: 'true' };
    }
  };

  beforeAll(async () => {
    for (const ws of workspaces) {
      await server.call('PUT', `/v1/workspaces/${ws}`);
      await server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path: 'seed.txt', content: 'seed' });
    }
  });

  it('allows exactly what each key is scoped to, and nothing else', async () => {
    const scopes = [
      { workspaces: ['scope-a'], tools: undefined },
      { workspaces: ['scope-a', 'scope-b'], tools: ['read_file', 'bash:exec'] },
      { workspaces: ['*'], tools: ['write_file', 'apply_patch'] },
    ];
    const keys = await Promise.all(scopes.map((scope) => key({ role: 'agent', approvalMode: 'auto', ...scope })));
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [index, scope] of scopes.entries()) {
      for (const ws of workspaces) {
        for (const tool of tools) {
          const answer = await keys[index]!.call('POST', `/v1/workspaces/${ws}/tools/${tool}`, argumentsFor(tool));
          seen.push(`${index} ${ws} ${tool}: ${answer.status} ${answer.body.error?.code ?? 'ok'}`);
          const visible = scope.workspaces.includes('*') || scope.workspaces.includes(ws);
          const allowed =
            scope.tools === undefined ||
            scope.tools.includes(tool) ||
            (tool === 'bash' && scope.tools.includes('bash:exec'));
          expected.push(
            `${index} ${ws} ${tool}: ${!visible ? '404 not_found' : !allowed ? '403 tool_not_allowed' : '200 ok'}`,
          );
        }
        // Outside the scope the workspace itself answers as absent.
        const info = await keys[index]!.call('GET', `/v1/workspaces/${ws}`);
        const visible = scope.workspaces.includes('*') || scope.workspaces.includes(ws);
        expect(info.status).toBe(visible ? 200 : 404);
      }
    }
    expect(seen).toEqual(expected);
  });

  it('allows single bash actions by name: bash:exec does not allow start', async () => {
    const execOnly = await key({ role: 'agent', approvalMode: 'auto', workspaces: ['scope-a'], tools: ['bash:exec'] });
    const start = await execOnly.call('POST', '/v1/workspaces/scope-a/tools/bash', {
      action: 'start',
      command: 'true',
    });
    expect(start.status).toBe(403);
    expect(start.body.error).toMatchObject({ code: 'tool_not_allowed', details: { tool: 'bash', action: 'start' } });
    const list = await execOnly.call('POST', '/v1/workspaces/scope-a/tools/bash', { action: 'list' });
    expect(list.body.error.code).toBe('tool_not_allowed');
  });
});

describe('secrets in logs', () => {
  it('never prints a key secret or an Authorization header', async () => {
    // An unknown key and a malformed header reach the logs only as far as the server logs anything.
    await callApi(server.url, 'tg_not_a_real_key_but_secret_looking', 'GET', '/v1/keys');
    await callApi(server.url, undefined, 'GET', '/v1/keys', undefined, { authorization: 'Basic dXNlcjpwYXNz' });
    const output = server.output();
    for (const secret of [...secrets, 'tg_not_a_real_key_but_secret_looking', 'dXNlcjpwYXNz'])
      expect(output).not.toContain(secret);
    expect(output.toLowerCase()).not.toContain('bearer');
    expect(output.toLowerCase()).not.toContain('authorization');
  });
});

// The Cloudflare home's directory in workerd: a workspace name enters its index (which usage and
// approval listings fan out to) only when an authorised PUT creates the workspace, never because
// someone asked about the name.

import { runInDurableObject, SELF } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

const KEY = 'tg_workerd_test_admin_key_0123456789';

async function api(
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await SELF.fetch(`https://toolgate.test${path}`, {
    method,
    headers: {
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** The names in the directory's index of workspace objects. */
async function indexed(): Promise<string[]> {
  const directory = env.DIRECTORY.get(env.DIRECTORY.idFromName('directory'));
  return runInDurableObject(directory, (_instance, state) =>
    state.storage.sql
      .exec('SELECT name FROM workspace_objects ORDER BY name')
      .toArray()
      .map((row) => String(row.name)),
  );
}

describe('the directory index of workspace objects', () => {
  it('holds only workspaces an authorised PUT created', async () => {
    const scoped = await api('POST', '/v1/keys', KEY, {
      name: 'scoped agent',
      role: 'agent',
      workspaces: ['elsewhere'],
    });
    expect(scoped.status).toBe(201);
    for (let i = 0; i < 5; i += 1) expect((await api('GET', `/v1/workspaces/junk-${i}`, undefined)).status).toBe(401);
    expect((await api('GET', '/v1/workspaces/junk-known-key', KEY)).status).toBe(404);
    expect((await api('POST', '/v1/workspaces/junk-tool/tools/read_file', KEY, { path: 'a.txt' })).status).toBe(404);
    expect((await api('PUT', '/v1/workspaces/junk-out-of-scope', scoped.body.secret)).status).toBe(404);
    expect((await api('GET', '/v1/approvals/apr_x.junk-approval', KEY)).status).toBe(404);
    expect((await api('PUT', '/v1/workspaces/created', KEY)).status).toBe(201);
    const names = await indexed();
    expect(names).toContain('created');
    expect(names.filter((name) => name.startsWith('junk'))).toEqual([]);
  });
});

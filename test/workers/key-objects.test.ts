// Keys in their own objects, in workerd: a key is found from its secret alone, workspace objects
// keep copies of it, and a revocation reaches every copy before it is answered; a guessed secret
// leaves no object storage behind; quotas and rate limits hold across workspaces.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { keyIdOfHash } from '../../src/cloudflare/key-identity.ts';
import { sha256Hex } from '../../src/core/content-hash.ts';
import { api } from './worker-api.ts';

const workspaces = ['keys-a', 'keys-b', 'keys-c'];

/** Rows of a table in a key's object, or null when the object stores no such table. */
function rows(id: string, sql: string): Promise<number | null> {
  return runInDurableObject(env.KEYS.get(env.KEYS.idFromName(id)), (_instance, state) => {
    const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray();
    if (tables.length === 0) return null;
    return Number(state.storage.sql.exec(sql).toArray()[0]!.n);
  });
}

describe('keys in their own objects', () => {
  it('names a key by its secret, and a revocation drops every copy before it answers', async () => {
    for (const ws of workspaces) expect((await api('PUT', `/v1/workspaces/${ws}`)).status).toBeLessThan(300);
    const created = await api('POST', '/v1/keys', {
      name: 'copied',
      role: 'agent',
      workspaces: ['*'],
      approvalMode: 'auto',
    });
    expect(created.status).toBe(201);
    const secret: string = created.body.secret;
    expect(created.body.id).toBe(await keyIdOfHash(await sha256Hex(new TextEncoder().encode(secret))));
    // Each workspace object now holds a copy, and the key's object knows it.
    for (const ws of workspaces)
      expect((await api('POST', `/v1/workspaces/${ws}/tools/glob`, { pattern: '*' }, secret)).status).toBe(200);
    expect(await rows(created.body.id, 'SELECT COUNT(*) AS n FROM key_watchers')).toBe(workspaces.length);

    expect((await api('DELETE', `/v1/keys/${created.body.id}`)).status).toBe(204);
    for (const ws of workspaces) {
      const after = await api('POST', `/v1/workspaces/${ws}/tools/glob`, { pattern: '*' }, secret);
      expect(after.status).toBe(401);
    }
    expect(await rows(created.body.id, 'SELECT COUNT(*) AS n FROM key_watchers')).toBe(0);
    expect((await api('GET', '/v1/keys')).body.keys.map((key: { id: string }) => key.id)).not.toContain(
      created.body.id,
    );
  });

  it('stores nothing for a guessed secret', async () => {
    const guess = 'tg_guessed_secret_that_belongs_to_no_key';
    expect((await api('POST', '/v1/workspaces/keys-a/tools/glob', { pattern: '*' }, guess)).status).toBe(401);
    expect((await api('GET', '/v1/usage', undefined, guess)).status).toBe(401);
    const id = await keyIdOfHash(await sha256Hex(new TextEncoder().encode(guess)));
    expect(await rows(id, 'SELECT COUNT(*) AS n FROM api_keys')).toBeNull();
  });

  it('admits exactly a quota of calls across workspaces, from the key object alone', async () => {
    const created = await api('POST', '/v1/keys', {
      name: 'quota',
      role: 'agent',
      workspaces: workspaces,
      approvalMode: 'auto',
      quota: { calls: 7, period: 'day' },
    });
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        api('POST', `/v1/workspaces/${workspaces[i % 3]}/tools/glob`, { pattern: '*' }, created.body.secret),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(7);
    expect(answers.filter((answer) => answer.status === 402)).toHaveLength(8);
    expect(await rows(created.body.id, 'SELECT SUM(calls) AS n FROM quota_calls')).toBe(7);
  });
});

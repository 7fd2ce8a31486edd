// The key store on a real SQLite database: keys created with one-time secrets kept only as hashes,
// the scope a key reaches, and revocation that takes effect at once.
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import { BOOTSTRAP_KEY_ID, canSeeWorkspace, KeyStore, mayManageKey, publicKey } from '../../src/keys/key-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { removeDir } from '../support/server-process.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** A database file of its own, so a test can open it again as a restarted server would. */
function databaseFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-keys-'));
  dirs.push(dir);
  return join(dir, 'toolgate.db');
}

/** Every value stored in the key table, as text. */
function storedValues(db: SqliteDatabase): string[] {
  return db.query('SELECT * FROM api_keys').flatMap((row) => Object.values(row).map(String));
}

describe('creating a key', () => {
  it('answers a secret once that then authenticates as the key, with the defaults of its role', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const agent = await keys.create({ name: 'ci agent', role: 'agent', workspaces: ['ws'] });
    expect(agent.secret).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(agent.key).toMatchObject({
      name: 'ci agent',
      role: 'agent',
      workspaces: ['ws'],
      approvalMode: 'safe',
      tools: undefined,
      quota: undefined,
    });
    expect(await keys.authenticate(agent.secret)).toEqual(agent.key);
    const approver = await keys.create({ name: 'lead', role: 'approver', workspaces: ['ws'] });
    expect(approver.key.approvalMode).toBe('auto');
    expect(approver.secret).not.toBe(agent.secret);
    expect(keys.list().map((key) => key.id)).toEqual([agent.key.id, approver.key.id]);
  });

  it('gives a notice-signing secret only to a key with a notify URL', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const notified = await keys.create({
      name: 'n',
      role: 'agent',
      workspaces: ['ws'],
      notifyUrl: 'https://hooks.example/approve',
    });
    expect(notified.notifySecret).toMatch(/^tgn_/);
    expect(keys.notifySecret(notified.key.id)).toBe(notified.notifySecret);
    const silent = await keys.create({ name: 's', role: 'agent', workspaces: ['ws'] });
    expect(silent.notifySecret).toBeUndefined();
  });

  it('authenticates no unknown, empty or overlong secret', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const { secret } = await keys.create({ name: 'a', role: 'agent', workspaces: ['ws'] });
    expect(await keys.authenticate(`${secret}x`)).toBeUndefined();
    expect(await keys.authenticate(secret.slice(0, -1))).toBeUndefined();
    expect(await keys.authenticate('')).toBeUndefined();
    expect(await keys.authenticate('tg_'.padEnd(600, 'a'))).toBeUndefined();
  });
});

describe('secrets at rest', () => {
  it('stores only the SHA-256 of a secret, and a restarted store still knows the key by it', async () => {
    const file = databaseFile();
    const db = SqliteDatabase.open(file);
    const created = await new KeyStore(db).create({
      name: 'a',
      role: 'agent',
      workspaces: ['ws'],
      notifyUrl: 'https://hooks.example/n',
    });
    const stored = storedValues(db);
    expect(stored.some((value) => value.includes(created.secret))).toBe(false);
    expect(stored).toContain(createHash('sha256').update(created.secret).digest('hex'));
    db.close();

    const reopened = SqliteDatabase.open(file);
    try {
      expect(await new KeyStore(reopened).authenticate(created.secret)).toEqual(created.key);
    } finally {
      reopened.close();
    }
  });

  it('never shows a secret or its hash in the public form of a key', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const created = await keys.create({
      name: 'a',
      role: 'agent',
      workspaces: ['ws'],
      notifyUrl: 'https://hooks.example/n',
    });
    const shown = JSON.stringify(publicKey(created.key));
    const hash = createHash('sha256').update(created.secret).digest('hex');
    for (const secret of [created.secret, hash, created.notifySecret!]) expect(shown).not.toContain(secret);
  });
});

describe('scope', () => {
  it('reaches the listed workspaces, or all of them with *', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const scoped = (await keys.create({ name: 's', role: 'agent', workspaces: ['a', 'b'] })).key;
    expect(['a', 'b', 'c'].map((ws) => canSeeWorkspace(scoped, ws))).toEqual([true, true, false]);
    const everywhere = (await keys.create({ name: 'e', role: 'agent', workspaces: ['*'] })).key;
    expect(canSeeWorkspace(everywhere, 'anything')).toBe(true);
  });

  it('lets an admin manage only keys whose whole scope lies within its own', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const tenantAdmin = (await keys.create({ name: 't', role: 'admin', workspaces: ['a', 'b'] })).key;
    const inside = (await keys.create({ name: 'in', role: 'agent', workspaces: ['a'] })).key;
    const straddling = (await keys.create({ name: 'out', role: 'agent', workspaces: ['a', 'c'] })).key;
    const everywhere = (await keys.create({ name: 'all', role: 'agent', workspaces: ['*'] })).key;
    expect([inside, straddling, everywhere].map((key) => mayManageKey(tenantAdmin, key))).toEqual([true, false, false]);
    const root = (await keys.create({ name: 'root', role: 'admin', workspaces: ['*'] })).key;
    expect(mayManageKey(root, everywhere)).toBe(true);
    // Only an admin manages keys, whatever its scope.
    const approver = (await keys.create({ name: 'ap', role: 'approver', workspaces: ['*'] })).key;
    expect(mayManageKey(approver, inside)).toBe(false);
  });
});

describe('revoking', () => {
  it('takes effect at once, though the secret was just authenticated, and only once', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    const { key, secret } = await keys.create({ name: 'a', role: 'agent', workspaces: ['ws'] });
    const other = await keys.create({ name: 'b', role: 'agent', workspaces: ['ws'] });
    expect(await keys.authenticate(secret)).toBeDefined();
    expect(keys.revoke(key.id)).toBe(true);
    expect(await keys.authenticate(secret)).toBeUndefined();
    expect(keys.get(key.id)).toBeUndefined();
    expect(keys.list().map((listed) => listed.id)).toEqual([other.key.id]);
    expect(keys.revoke(key.id)).toBe(false);
    expect(await keys.authenticate(other.secret)).toEqual(other.key);
  });

  it('refuses to revoke the bootstrap admin key, which the configuration rotates instead', async () => {
    const keys = new KeyStore(SqliteDatabase.memory());
    await keys.ensureBootstrapAdmin('tg_first_bootstrap_secret_0123456789');
    const refusal = (() => {
      try {
        keys.revoke(BOOTSTRAP_KEY_ID);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(ToolError);
    expect((refusal as ToolError).code).toBe('forbidden');
    expect(await keys.authenticate('tg_first_bootstrap_secret_0123456789')).toMatchObject({
      id: BOOTSTRAP_KEY_ID,
      role: 'admin',
    });
    await keys.ensureBootstrapAdmin('tg_second_bootstrap_secret_0123456789');
    expect(await keys.authenticate('tg_first_bootstrap_secret_0123456789')).toBeUndefined();
    expect(await keys.authenticate('tg_second_bootstrap_secret_0123456789')).toMatchObject({ id: BOOTSTRAP_KEY_ID });
  });
});

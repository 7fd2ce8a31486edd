// The hook store: settings kept as given, and a data dir from before requireTimestamp gains it, off.
import { describe, expect, it } from 'vitest';
import { HookStore, publicHook } from '../../src/hooks/hook-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';

const hook = {
  id: 'ci',
  workspace: 'ws',
  secret: 'a hook secret of some length',
  ownerKeyId: 'key_1',
  checkpoint: false,
  requireTimestamp: true,
};

describe('HookStore', () => {
  it('keeps requireTimestamp, replaces it when configured again, and shows it without the secret', () => {
    const store = new HookStore(SqliteDatabase.memory());
    expect(store.put(hook).hook).toMatchObject({ requireTimestamp: true });
    expect(publicHook(store.get('ci')!)).toEqual({
      id: 'ci',
      workspace: 'ws',
      checkpoint: false,
      requireTimestamp: true,
      createdAt: expect.any(String),
    });
    store.put({ ...hook, requireTimestamp: false });
    expect(store.list().map((entry) => entry.requireTimestamp)).toEqual([false]);
  });

  it('opens a hooks table from before requireTimestamp: its hooks keep working, with the setting off', () => {
    const db = SqliteDatabase.memory();
    db.script(`
      CREATE TABLE hooks (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, secret TEXT NOT NULL, owner_key_id TEXT NOT NULL,
        checkpoint INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      INSERT INTO hooks VALUES ('old', 'ws', 'a hook secret of some length', 'key_1', 1, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
    `);
    const store = new HookStore(db);
    expect(store.get('old')).toMatchObject({ id: 'old', checkpoint: true, requireTimestamp: false });
    // Opening it again finds the column already there.
    expect(new HookStore(db).put({ ...hook, id: 'old' }).hook).toMatchObject({
      requireTimestamp: true,
      createdAt: '2025-01-01T00:00:00.000Z',
    });
  });
});

// Runs the SqlDatabase contract against the SQLite driver, plus what only a database file can show.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { describeSqlDatabaseContract } from './sql-database-contract.ts';

const SQLITE_WRITER = fileURLToPath(new URL('./fixtures/sqlite-writer.ts', import.meta.url));

describeSqlDatabaseContract('sqlite in memory', async () => {
  const database = SqliteDatabase.memory();
  return { database, teardown: async () => database.close() };
});

describeSqlDatabaseContract('sqlite file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-sqlite-'));
  const database = SqliteDatabase.open(join(dir, 'nested', 'toolgate.db'));
  return {
    database,
    teardown: async () => {
      database.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('SqliteDatabase file', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('keeps committed data across close and reopen, in WAL mode', async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-sqlite-'));
    const file = join(dir, 'data', 'meta.db');
    const first = SqliteDatabase.open(file);
    expect(first.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    first.script('CREATE TABLE kept (id INTEGER PRIMARY KEY, value TEXT)');
    first.transaction(() => {
      first.query('INSERT INTO kept (value) VALUES (?)', 'one');
      first.query('INSERT INTO kept (value) VALUES (?)', 'two');
    });
    first.close();
    const reopened = SqliteDatabase.open(file);
    expect(reopened.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
    expect(reopened.query('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    expect(reopened.query('SELECT value FROM kept ORDER BY id')).toEqual([{ value: 'one' }, { value: 'two' }]);
    reopened.close();
  });

  it('binds bigint parameters as integers and returns integers as numbers, as Durable Object SQL does', () => {
    const database = SqliteDatabase.memory();
    expect(
      database.query('SELECT typeof(?) AS big, typeof(?) AS whole, typeof(?) AS fraction', 2n ** 60n, 5, 1.5),
    ).toEqual([{ big: 'integer', whole: 'integer', fraction: 'real' }]);
    expect(database.query('SELECT ? AS small', 5n)).toEqual([{ small: 5 }]);
    database.close();
  });

  it('keeps every commit it reported when the process is killed with SIGKILL', async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-sqlite-kill-'));
    const file = join(dir, 'killed.db');
    const child = spawn(process.execPath, ['--import', 'tsx', SQLITE_WRITER, file], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    const reported: number[] = [];
    for await (const line of createInterface({ input: child.stdout as Readable })) {
      reported.push(Number(line));
      if (reported.length === 200) child.kill('SIGKILL');
    }
    const [, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    expect(signal).toBe('SIGKILL');
    expect(reported.length).toBeGreaterThanOrEqual(200);

    const reopened = SqliteDatabase.open(file);
    const stored = new Set(reopened.query<{ id: number }>('SELECT id FROM committed').map((row) => row.id));
    reopened.close();
    expect(reported.filter((id) => !stored.has(id))).toEqual([]);
  }, 30_000);
});

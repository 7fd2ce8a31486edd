// Runs the SqlDatabase contract against the Durable Object driver on a real `ctx.storage` in workerd.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DurableObjectSqlDatabase } from '../../src/storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../../src/storage/sql-database.ts';
import { describeSqlDatabaseContract, type SqlDatabaseFixture } from '../storage/sql-database-contract.ts';

/** A fresh object per call, so each test has a database of its own. */
async function freshDatabase(): Promise<SqlDatabaseFixture & { run: NonNullable<SqlDatabaseFixture['run']> }> {
  const stub = env.SQL_OBJECT.get(env.SQL_OBJECT.newUniqueId());
  const database = await runInDurableObject(stub, (_instance, state) => new DurableObjectSqlDatabase(state.storage));
  // The object's storage answers only inside the object, so every use of it runs there.
  return { database, run: (body) => runInDurableObject(stub, () => body()) };
}

describeSqlDatabaseContract('durable object (workerd)', freshDatabase);

describe('DurableObjectSqlDatabase', () => {
  const inFreshDatabase = async (body: (database: SqlDatabase) => void): Promise<void> => {
    const { database, run } = await freshDatabase();
    await run(() => body(database));
  };

  it('binds bigints beyond 2^53 as exact integers', () =>
    inFreshDatabase((database) => {
      const big = 2n ** 60n + 1n;
      expect(database.query('SELECT typeof(?) AS type, CAST(? AS TEXT) AS digits', big, big)).toEqual([
        { type: 'integer', digits: '1152921504606846977' },
      ]);
      expect(() => database.query('SELECT ? AS n', 2n ** 63n)).toThrow(RangeError);
    }));

  it('stores an integer in a TEXT column as its digits, as SQLite does', () =>
    inFreshDatabase((database) => {
      database.script('CREATE TABLE note (body TEXT)');
      database.query('INSERT INTO note (body) VALUES (?)', 5);
      expect(database.query('SELECT body FROM note')).toEqual([{ body: '5' }]);
    }));

  it('leaves question marks in strings, quoted names and comments alone', () =>
    inFreshDatabase((database) => {
      const rows = database.query(
        `SELECT '?' AS "a?", ? AS "it's ?", ? AS [b?] -- what ?
         , /* ? */ typeof(?) AS t`,
        1,
        'two',
        3,
      );
      expect(rows).toEqual([{ 'a?': '?', "it's ?": 1, 'b?': 'two', t: 'integer' }]);
    }));

  it('refuses numbered parameters, which the port does not bind', () =>
    inFreshDatabase((database) => {
      expect(() => database.query('SELECT ?1 AS n', 1)).toThrow(/position/);
    }));
});

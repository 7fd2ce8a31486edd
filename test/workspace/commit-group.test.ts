// Group commit on a real SQLite database: commits of one turn share a transaction, and each one's
// failure rolls back and rejects only that commit.
import { describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { SqlDatabase } from '../../src/storage/sql-database.ts';
import { CommitGroup } from '../../src/workspace/commit-group.ts';

/** The real database, counting its outermost transactions. */
function counted(): { db: SqlDatabase; outer: () => number } {
  const real = SqliteDatabase.memory();
  real.script('CREATE TABLE t (v TEXT NOT NULL UNIQUE)');
  let depth = 0;
  let outer = 0;
  const db: SqlDatabase = {
    query: (sql, ...params) => real.query(sql, ...params),
    script: (sql) => real.script(sql),
    close: () => real.close(),
    transaction<T>(fn: () => T): T {
      if (depth === 0) outer += 1;
      depth += 1;
      try {
        return real.transaction(fn);
      } finally {
        depth -= 1;
      }
    },
  };
  return { db, outer: () => outer };
}

const values = (db: SqlDatabase) => db.query<{ v: string }>('SELECT v FROM t ORDER BY v').map((row) => row.v);

describe('CommitGroup', () => {
  it('commits the work of one turn in one transaction; a failing piece rolls back and rejects alone', async () => {
    const { db, outer } = counted();
    const group = new CommitGroup(db);
    const insert = (v: string) => () => {
      db.query('INSERT INTO t (v) VALUES (?)', v);
      return v;
    };
    const results = await Promise.allSettled([
      group.run(insert('a')),
      group.run(() => {
        db.query('INSERT INTO t (v) VALUES (?)', 'half');
        throw new Error('refused half way');
      }),
      group.run(insert('a')), // the UNIQUE constraint refuses this one
      group.run(insert('b')),
    ]);
    expect(results.map((result) => (result.status === 'fulfilled' ? result.value : 'rejected'))).toEqual([
      'a',
      'rejected',
      'rejected',
      'b',
    ]);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe('refused half way');
    expect(values(db)).toEqual(['a', 'b']);
    expect(outer()).toBe(1);
    // Work of a later turn is a transaction of its own.
    await group.run(insert('c'));
    expect(outer()).toBe(2);
    expect(values(db)).toEqual(['a', 'b', 'c']);
  });

  it('rejects every piece when the shared transaction itself cannot commit, and keeps none of them', async () => {
    const real = SqliteDatabase.memory();
    real.script('CREATE TABLE t (v TEXT NOT NULL)');
    // A deferred foreign key fails at COMMIT, after every piece has run.
    real.script(
      'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)',
    );
    const group = new CommitGroup(real);
    const results = await Promise.allSettled([
      group.run(() => real.query('INSERT INTO t (v) VALUES (?)', 'x')),
      group.run(() => real.query('INSERT INTO child (p) VALUES (?)', 42)),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(real.query('SELECT COUNT(*) AS n FROM t')[0]!.n).toBe(0);
  });
});

// The SqlDatabase contract: every driver (sqlite memory and file, Durable Object) runs this suite.

import { afterEach, beforeEach, describe, expect, it as vitestIt } from 'vitest';
import type { SqlDatabase } from '../../src/storage/sql-database.ts';

export interface SqlDatabaseFixture {
  database: SqlDatabase;
  teardown?: () => Promise<void>;
  /**
   * Runs a piece of the test where the database can be used. A Durable Object's storage only
   * answers inside that object, so its fixture runs each test there; others run it in place.
   */
  run?: <T>(body: () => T | Promise<T>) => Promise<T>;
}

const SCHEMA = `
  CREATE TABLE job (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, weight REAL, payload BLOB);
  CREATE TABLE job_event (id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES job(id), kind TEXT);
`;

export function describeSqlDatabaseContract(name: string, setup: () => Promise<SqlDatabaseFixture>): void {
  describe(`SqlDatabase contract: ${name}`, () => {
    let database: SqlDatabase;
    let teardown: (() => Promise<void>) | undefined;
    let run: NonNullable<SqlDatabaseFixture['run']>;
    /** Vitest's `it`, with the body run where the fixture's database answers. */
    const it = (title: string, body: () => unknown): void => {
      vitestIt(title, () => run(body));
    };
    const names = (): string[] =>
      database.query<{ name: string }>('SELECT name FROM job ORDER BY name').map((row) => row.name);

    beforeEach(async () => {
      const fixture = await setup();
      ({ database, teardown } = fixture);
      run = fixture.run ?? (async (body) => body());
      await run(() => database.script(SCHEMA));
    });
    afterEach(async () => {
      await teardown?.();
    });

    it('creates tables from a script of several statements', () => {
      const tables = database.query<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'job%' ORDER BY name",
      );
      expect(tables.map((row) => row.name)).toEqual(['job', 'job_event']);
    });

    it('binds and returns every SqlValue type', () => {
      const blob = Uint8Array.from([0, 1, 127, 128, 255]);
      database.query('INSERT INTO job (id, name, weight, payload) VALUES (?, ?, ?, ?)', 7, 'text ✓', 2.5, blob);
      database.query('INSERT INTO job (id, name, weight, payload) VALUES (?, ?, ?, ?)', 8n, 'bigint id', null, null);
      const [first, second] = database.query('SELECT id, name, weight, payload FROM job ORDER BY id');
      expect(first).toMatchObject({ id: 7, name: 'text ✓', weight: 2.5 });
      expect(first?.payload).toBeInstanceOf(Uint8Array);
      expect(Array.from(first?.payload as Uint8Array)).toEqual([0, 1, 127, 128, 255]);
      expect(second).toEqual({ id: 8, name: 'bigint id', weight: null, payload: null });
      expect(database.query('SELECT name FROM job WHERE id = ?', 8n)).toEqual([{ name: 'bigint id' }]);
    });

    it('stores integral numbers as integers and fractional ones as reals', () => {
      expect(database.query('SELECT typeof(?) AS a, typeof(?) AS b, typeof(?) AS c', 1, 1.5, 'x')).toEqual([
        { a: 'integer', b: 'real', c: 'text' },
      ]);
      expect(database.query('SELECT ? + 1 AS sum', Number.MAX_SAFE_INTEGER - 1)).toEqual([
        { sum: Number.MAX_SAFE_INTEGER },
      ]);
    });

    it('returns an empty array for statements without rows, and rows with RETURNING', () => {
      expect(database.query("INSERT INTO job (name) VALUES ('a')")).toEqual([]);
      const returned = database.query<{ id: number; name: string }>(
        "INSERT INTO job (name) VALUES ('b') RETURNING id, name",
      );
      expect(returned).toEqual([{ id: 2, name: 'b' }]);
      expect(database.query('UPDATE job SET weight = 1 WHERE name = ? RETURNING name', 'a')).toEqual([{ name: 'a' }]);
      expect(database.query('DELETE FROM job WHERE weight IS NULL RETURNING name')).toEqual([{ name: 'b' }]);
    });

    it('reuses one statement with different parameters', () => {
      for (let index = 0; index < 50; index += 1) database.query('INSERT INTO job (name) VALUES (?)', `job-${index}`);
      expect(database.query('SELECT count(*) AS count FROM job')).toEqual([{ count: 50 }]);
    });

    it('enforces foreign keys', () => {
      expect(() => database.query("INSERT INTO job_event (job_id, kind) VALUES (999, 'start')")).toThrow();
    });

    it('commits every statement of a transaction together and returns its result', () => {
      const count = database.transaction(() => {
        database.query("INSERT INTO job (id, name) VALUES (1, 'one')");
        database.query("INSERT INTO job_event (job_id, kind) VALUES (1, 'created')");
        return database.query<{ count: number }>('SELECT count(*) AS count FROM job_event')[0]?.count;
      });
      expect(count).toBe(1);
      expect(names()).toEqual(['one']);
    });

    it('rolls back every statement when the function throws, and rethrows', () => {
      database.query("INSERT INTO job (name) VALUES ('before')");
      const failure = new Error('boom');
      expect(() =>
        database.transaction(() => {
          database.query("INSERT INTO job (name) VALUES ('inside')");
          database.query("UPDATE job SET weight = 9 WHERE name = 'before'");
          throw failure;
        }),
      ).toThrow(failure);
      expect(names()).toEqual(['before']);
      expect(database.query("SELECT weight FROM job WHERE name = 'before'")).toEqual([{ weight: null }]);
    });

    it('rolls back when a statement inside fails', () => {
      expect(() =>
        database.transaction(() => {
          database.query("INSERT INTO job (name) VALUES ('dup')");
          database.query("INSERT INTO job (name) VALUES ('dup')");
        }),
      ).toThrow();
      expect(names()).toEqual([]);
    });

    it('commits a nested transaction with the outer one', () => {
      database.transaction(() => {
        database.query("INSERT INTO job (name) VALUES ('outer')");
        database.transaction(() => database.query("INSERT INTO job (name) VALUES ('inner')"));
      });
      expect(names()).toEqual(['inner', 'outer']);
    });

    it('undoes only a nested transaction that throws when the outer one catches it', () => {
      database.transaction(() => {
        database.query("INSERT INTO job (name) VALUES ('outer-before')");
        expect(() =>
          database.transaction(() => {
            database.query("INSERT INTO job (name) VALUES ('inner')");
            throw new Error('inner fails');
          }),
        ).toThrow('inner fails');
        database.query("INSERT INTO job (name) VALUES ('outer-after')");
      });
      expect(names()).toEqual(['outer-after', 'outer-before']);
    });

    it('undoes a nested transaction that committed when the outer one throws', () => {
      expect(() =>
        database.transaction(() => {
          database.transaction(() => database.query("INSERT INTO job (name) VALUES ('inner')"));
          throw new Error('outer fails');
        }),
      ).toThrow('outer fails');
      expect(names()).toEqual([]);
    });

    it('refuses a transaction function that returns a promise, writing nothing', async () => {
      expect(() => database.transaction(async () => database.query("INSERT INTO job (name) VALUES ('async')"))).toThrow(
        /synchronous/,
      );
      expect(() =>
        database.transaction(() => {
          database.query("INSERT INTO job (name) VALUES ('thenable')");
          return Promise.resolve(1);
        }),
      ).toThrow(/synchronous/);
      // A turn of the event loop: whatever the returned promises would still do has been done.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(names()).toEqual([]);
      // The database stays usable afterwards.
      database.transaction(() => database.query("INSERT INTO job (name) VALUES ('after')"));
      expect(names()).toEqual(['after']);
    });
  });
}

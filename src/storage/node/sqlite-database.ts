// The SQLite SqlDatabase driver on better-sqlite3: metadata of the embedded and Node-with-S3 homes.

import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { SqlDatabase, SqlRow, SqlValue } from '../sql-database.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.ts';

/** Enough for every distinct statement the app prepares, small enough to bound memory. */
const STATEMENT_CACHE_SIZE = 256;

export class SqliteDatabase implements SqlDatabase {
  /** The better-sqlite3 handle, for tests and for tuning that the port does not cover. */
  readonly raw: Database.Database;
  readonly #statements = new Map<string, Database.Statement<unknown[], unknown>>();
  /** One row a statement: a prepared one-row upsert ran 5,000 rows in half the time of 12-row ones. */
  readonly rowsPerInsert = 1;

  private constructor(raw: Database.Database) {
    this.raw = raw;
    // Off by default in SQLite; the schema's REFERENCES clauses mean nothing without it.
    this.raw.pragma('foreign_keys = ON');
  }

  /** Opens (creating it 0600, and missing parent directories 0700) a database file. */
  static open(file: string): SqliteDatabase {
    mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    // The database holds secrets (key hashes, hook secrets). SQLite would create it 0644, so it is
    // created here (empty is a valid database), and SQLite gives its -wal and -shm the same mode.
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
    const database = new SqliteDatabase(new Database(file));
    try {
      // A process that is still closing the file gets a few seconds to let go of it.
      database.raw.pragma('busy_timeout = 5000');
      // One process owns the database: it takes the write lock now and keeps it, so a second
      // server on the same data dir fails at start instead of racing this one (and the
      // in-memory caches above this port stay true), and WAL keeps its index in heap memory.
      database.raw.pragma('locking_mode = EXCLUSIVE');
      // WAL lets a write commit with one append; NORMAL syncs at checkpoints, so a commit
      // survives a process crash and the file stays consistent after a power cut.
      database.raw.pragma('journal_mode = WAL');
      database.raw.pragma('synchronous = NORMAL');
      database.raw.exec('BEGIN IMMEDIATE; COMMIT');
    } catch (error) {
      database.raw.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') {
        throw new Error(`${file} is in use by another process; is another toolgate server using this data directory?`, {
          cause: error,
        });
      }
      throw error;
    }
    return database;
  }

  /** A private in-memory database: tests and throwaway previews. */
  static memory(): SqliteDatabase {
    return new SqliteDatabase(new Database(':memory:'));
  }

  query<R extends SqlRow = SqlRow>(sql: string, ...params: SqlValue[]): R[] {
    const statement = this.#prepare(sql);
    const bound = params.some(isInteger) ? params.map(toBindable) : params;
    if (!statement.reader) {
      statement.run(...bound);
      return [];
    }
    return statement.all(...bound) as R[];
  }

  script(sql: string): void {
    this.raw.exec(sql);
  }

  /**
   * Runs `fn` in a transaction. A nested call becomes a savepoint: when it throws, only its own
   * statements are rolled back, and the outer transaction carries on if it catches the error;
   * otherwise its statements commit with the outer transaction.
   */
  transaction<T>(fn: () => T): T {
    // Refused before it runs: statements after its first await would land outside the
    // transaction, and other work could interleave with the ones before it.
    if (fn.constructor.name === 'AsyncFunction') throw new Error(asyncTransactionMessage);
    return this.raw.transaction(() => {
      const result = fn();
      if (isPromiseLike(result)) {
        // The refused work's own failure must not surface later as an unhandled rejection.
        Promise.resolve(result).catch(() => undefined);
        throw new Error(asyncTransactionMessage);
      }
      return result;
    })();
  }

  close(): void {
    this.#statements.clear();
    this.raw.close();
  }

  #prepare(sql: string): Database.Statement<unknown[], unknown> {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.raw.prepare(sql);
      // The app's statements are few and fixed; a full cache means ad-hoc SQL, so start over.
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) this.#statements.clear();
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

const asyncTransactionMessage =
  'A transaction function must be synchronous: finish every await before calling transaction().';

/**
 * better-sqlite3 binds every JS number as REAL; integral ones are bound as INTEGER instead, so
 * `1` is stored, compared and typed as the integer it is (as Durable Object SQL does).
 */
function toBindable(value: SqlValue): unknown {
  return typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value;
}

function isInteger(value: SqlValue): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

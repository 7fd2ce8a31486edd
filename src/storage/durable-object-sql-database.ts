// The Durable Object SqlDatabase driver: a workspace's metadata in its Durable Object's SQLite.

import type { SqlDatabase, SqlRow, SqlValue } from './sql-database.ts';

/** What Durable Object SQL binds and returns: numbers are doubles, blobs come back as ArrayBuffer. */
export type DurableObjectSqlValue = ArrayBuffer | Uint8Array | string | number | null;

/**
 * The subset of a Durable Object's `ctx.storage` (`DurableObjectStorage`) this driver uses,
 * declared here so the module needs no Cloudflare types package; the real object satisfies it.
 */
export interface DurableObjectStorageBinding {
  sql: {
    exec(query: string, ...bindings: DurableObjectSqlValue[]): { toArray(): Record<string, DurableObjectSqlValue>[] };
  };
  /** Nested calls become savepoints: a caught inner failure undoes only the inner part. */
  transactionSync<T>(fn: () => T): T;
}

/** Enough for every distinct statement the app runs, small enough to bound memory. */
const PLACEHOLDER_CACHE_SIZE = 256;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export class DurableObjectSqlDatabase implements SqlDatabase {
  readonly #storage: DurableObjectStorageBinding;
  /** Where each statement's `?` placeholders are, so a query is scanned once. */
  readonly #placeholders = new Map<string, number[]>();

  constructor(storage: DurableObjectStorageBinding) {
    this.#storage = storage;
  }

  query<R extends SqlRow = SqlRow>(sql: string, ...params: SqlValue[]): R[] {
    const bindings: DurableObjectSqlValue[] = [];
    const integers: boolean[] = [];
    for (const param of params) {
      const [binding, integer] = toBinding(param);
      bindings.push(binding);
      integers.push(integer);
    }
    const text = integers.includes(true) ? castIntegerParameters(sql, this.#placeholdersOf(sql), integers) : sql;
    const rows = this.#storage.sql.exec(text, ...bindings).toArray();
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        if (value instanceof ArrayBuffer) row[column] = new Uint8Array(value);
      }
    }
    return rows as R[];
  }

  script(sql: string): void {
    // Durable Object SQL runs several statements in one exec when there are no bindings;
    // draining the cursor makes sure the last one has run to completion.
    this.#storage.sql.exec(sql).toArray();
  }

  /**
   * Runs `fn` in `transactionSync`, which nests through savepoints of its own: raw BEGIN and
   * SAVEPOINT statements are refused by Durable Object SQL, so none are issued here.
   */
  transaction<T>(fn: () => T): T {
    // Refused before it runs: statements after its first await would land outside the
    // transaction, and other work could interleave with the ones before it.
    if (fn.constructor.name === 'AsyncFunction') throw new Error(asyncTransactionMessage);
    return this.#storage.transactionSync(() => {
      const result = fn();
      if (isPromiseLike(result)) {
        // The refused work's own failure must not surface later as an unhandled rejection.
        Promise.resolve(result).catch(() => undefined);
        throw new Error(asyncTransactionMessage);
      }
      return result;
    });
  }

  /** The database belongs to the Durable Object and lives as long as it does: nothing to close. */
  close(): void {}

  #placeholdersOf(sql: string): number[] {
    let positions = this.#placeholders.get(sql);
    if (positions === undefined) {
      positions = placeholderPositions(sql);
      // The app's statements are few and fixed; a full cache means ad-hoc SQL, so start over.
      if (this.#placeholders.size >= PLACEHOLDER_CACHE_SIZE) this.#placeholders.clear();
      this.#placeholders.set(sql, positions);
    }
    return positions;
  }
}

const asyncTransactionMessage =
  'A transaction function must be synchronous: finish every await before calling transaction().';

/**
 * Durable Object SQL binds every number as REAL and refuses bigints. Integers are bound as a
 * number (safe integers) or decimal text (bigints) and marked for `CAST(? AS INTEGER)`, so they
 * are stored, compared and typed as integers, as the port and the SQLite driver do.
 */
function toBinding(value: SqlValue): [DurableObjectSqlValue, boolean] {
  if (typeof value === 'number') return [value, Number.isSafeInteger(value)];
  if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) {
      throw new RangeError(`The integer ${value} does not fit in SQLite's 64-bit INTEGER.`);
    }
    return [value.toString(), true];
  }
  return [value, false];
}

/** The statement with each `?` whose parameter is an integer wrapped in `CAST(? AS INTEGER)`. */
function castIntegerParameters(sql: string, positions: number[], integers: boolean[]): string {
  let text = '';
  let from = 0;
  positions.forEach((position, index) => {
    if (integers[index] !== true) return;
    text += `${sql.slice(from, position)}CAST(? AS INTEGER)`;
    from = position + 1;
  });
  return text + sql.slice(from);
}

/**
 * Offsets of the `?` parameters in a statement, skipping string literals, quoted identifiers
 * and comments. Numbered `?NNN` parameters are refused: the port binds by position only.
 */
function placeholderPositions(sql: string): number[] {
  const positions: number[] = [];
  let index = 0;
  while (index < sql.length) {
    const char = sql[index];
    if (char === "'" || char === '"' || char === '`') {
      index = closingQuote(sql, index, char);
    } else if (char === '[') {
      index = endOf(sql, ']', index + 1);
    } else if (char === '-' && sql[index + 1] === '-') {
      index = endOf(sql, '\n', index + 2);
    } else if (char === '/' && sql[index + 1] === '*') {
      index = endOf(sql, '*/', index + 2);
    } else {
      if (char === '?') {
        if (/[0-9]/.test(sql[index + 1] ?? '')) {
          throw new Error('SqlDatabase binds parameters by position: use ? instead of numbered ?NNN parameters.');
        }
        positions.push(index);
      }
      index += 1;
    }
  }
  return positions;
}

/** The index just past a quoted token that opens at `start`; a doubled quote is an escaped one. */
function closingQuote(sql: string, start: number, quote: string): number {
  let index = start + 1;
  for (;;) {
    const close = sql.indexOf(quote, index);
    if (close === -1) return sql.length;
    if (sql[close + 1] !== quote) return close + 1;
    index = close + 2;
  }
}

/** The index just past the next `token` at or after `from`, or the end of the text. */
function endOf(sql: string, token: string, from: number): number {
  const found = sql.indexOf(token, from);
  return found === -1 ? sql.length : found + token.length;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

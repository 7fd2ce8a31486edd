// The SqlDatabase port: the synchronous subset that better-sqlite3 and Durable Object SQL share.

/** Integers are read back as JS numbers (as Durable Object SQL returns them): keep them within ±2^53. */
export type SqlValue = string | number | bigint | null | Uint8Array;
export type SqlRow = Record<string, SqlValue>;

export interface SqlDatabase {
  /**
   * Runs one statement with positional `?` parameters and returns its rows
   * (an empty array for statements that return none; use RETURNING to learn what changed).
   */
  query<R extends SqlRow = SqlRow>(sql: string, ...params: SqlValue[]): R[];
  /** Runs a script of several statements without parameters (schema changes). */
  script(sql: string): void;
  /**
   * Runs `fn` atomically: every statement inside commits together or, when it throws, not at
   * all. Synchronous on purpose: nothing may await inside, so no other work interleaves.
   * Nested calls join the outer transaction.
   */
  transaction<T>(fn: () => T): T;
  close(): void;
  /**
   * How many rows a bulk write should put in one INSERT: Durable Object SQL pays for each
   * statement it runs, while SQLite in the process runs a prepared one-row statement fastest (a
   * multi-row upsert cost it twice as much a row). Unset: as many as the bound values allow.
   */
  readonly rowsPerInsert?: number;
}

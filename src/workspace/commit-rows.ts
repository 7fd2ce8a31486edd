// The entries rows as one manifest commit sees them: read many paths a statement, written many rows a statement.
import type { EntryType } from '../core/path-guard.ts';
import { parentPath } from '../core/virtual-path.ts';
import type { SqlDatabase, SqlValue } from '../storage/sql-database.ts';
import type { ManifestEntry } from './manifest-entry.ts';

/**
 * Paths one lookup names and rows one write carries. Durable Object SQL binds at most 100 values
 * a statement: a lookup binds the workspace and its paths, a row 8 values.
 */
const PATHS_PER_READ = 96;
const ROWS_PER_WRITE = 12;
/** Fewer changes than this read their paths one by one: a lookup of one size costs more than a few point reads. */
const PREFETCH_FROM = 32;

const ENTRY_COLUMNS = 'path, type, blob, target, size, version';
const ROW_VALUES = '(?, ?, ?, ?, ?, ?, ?, ?)';
const upsertSql = (rows: number) =>
  `INSERT INTO entries (workspace, path, parent, type, blob, target, size, version) VALUES ${Array(rows).fill(ROW_VALUES).join(', ')}
   ON CONFLICT (workspace, path) DO UPDATE SET type = excluded.type, blob = excluded.blob, target = excluded.target,
     size = excluded.size, version = excluded.version`;
const UPSERT_ONE = upsertSql(1);
const UPSERT_MANY = upsertSql(ROWS_PER_WRITE);
const READ_MANY = `SELECT ${ENTRY_COLUMNS} FROM entries WHERE workspace = ? AND path IN (${Array(PATHS_PER_READ).fill('?').join(', ')})`;

/**
 * A commit of thousands of changes (an archive, a runner's sync) spent most of its time on one
 * statement per path read and per row written; here what the commit will read is fetched ahead
 * in a few statements, and what it writes waits to go out a dozen rows at a time. Every read
 * sees the writes before it: what is written is remembered, and queued rows are sent before
 * any statement that could see them.
 */
export class CommitRows {
  /** What the commit knows of a path, read or written by it; undefined: known to be absent. */
  private readonly known = new Map<string, ManifestEntry | undefined>();
  private queued: SqlValue[] = [];
  private queuedRows = 0;
  /** Rows one upsert carries: ROWS_PER_WRITE, or fewer where the database runs small statements faster. */
  private readonly rowsPerWrite: number;

  constructor(
    private readonly db: SqlDatabase,
    private readonly workspace: string,
  ) {
    this.rowsPerWrite = Math.max(1, Math.min(ROWS_PER_WRITE, db.rowsPerInsert ?? ROWS_PER_WRITE));
  }

  /** Reads the entries at `paths` (and their parents) ahead of the changes that need them. */
  prefetch(paths: readonly string[]): void {
    if (paths.length < PREFETCH_FROM) return;
    const wanted: string[] = [];
    const want = (path: string) => {
      if (path === '' || this.known.has(path)) return;
      this.known.set(path, undefined);
      wanted.push(path);
    };
    for (const path of paths) {
      want(path);
      want(parentPath(path));
    }
    for (let start = 0; start < wanted.length; start += PATHS_PER_READ) {
      const part = wanted.slice(start, start + PATHS_PER_READ);
      // One statement of one size, so it is prepared once: the last part repeats a path to fill it.
      while (part.length < PATHS_PER_READ) part.push(part[0]!);
      for (const entry of this.db.query<ManifestEntry>(READ_MANY, this.workspace, ...part))
        this.known.set(entry.path, entry);
    }
  }

  /** The entry at `path` as the commit has left it so far. */
  read(path: string): ManifestEntry | undefined {
    if (this.known.has(path)) return this.known.get(path);
    const entry = this.db.query<ManifestEntry>(
      `SELECT ${ENTRY_COLUMNS} FROM entries WHERE workspace = ? AND path = ?`,
      this.workspace,
      path,
    )[0];
    this.known.set(path, entry);
    return entry;
  }

  /** Puts an entry at `path`, replacing any there. */
  write(
    path: string,
    type: EntryType,
    blob: string | null,
    target: string | null,
    size: number,
    version: number,
  ): void {
    this.known.set(path, { path, type, blob, target, size, version });
    if (this.rowsPerWrite === 1) {
      this.db.query(UPSERT_ONE, this.workspace, path, parentPath(path), type, blob, target, size, version);
      return;
    }
    this.queued.push(this.workspace, path, parentPath(path), type, blob, target, size, version);
    this.queuedRows += 1;
    if (this.queuedRows === this.rowsPerWrite) this.flush();
  }

  delete(path: string): void {
    this.flush();
    this.db.query('DELETE FROM entries WHERE workspace = ? AND path = ?', this.workspace, path);
    this.known.set(path, undefined);
  }

  hasChildren(path: string): boolean {
    this.flush();
    return (
      this.db.query('SELECT 1 AS one FROM entries WHERE workspace = ? AND parent = ? LIMIT 1', this.workspace, path)
        .length > 0
    );
  }

  /** Sends the rows still queued; the commit calls it before anything else reads the table. */
  flush(): void {
    if (this.queuedRows === ROWS_PER_WRITE) this.db.query(UPSERT_MANY, ...this.queued);
    else for (let at = 0; at < this.queued.length; at += 8) this.db.query(UPSERT_ONE, ...this.queued.slice(at, at + 8));
    this.queued = [];
    this.queuedRows = 0;
  }
}

// The manifest of one workspace incarnation: entries in SQL and atomic multi-entry commits.
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { CommitRows } from './commit-rows.ts';
import type { EntryCache } from './entry-cache.ts';
import type { ManifestEntry } from './manifest-entry.ts';
import { CommitChanges, type ManifestChange } from './commit-changes.ts';

export type { ManifestEntry } from './manifest-entry.ts';
export type { ManifestChange, Precondition } from './commit-changes.ts';

export interface CommitResult {
  /** The workspace version this commit created; every entry it wrote carries it. */
  version: number;
  /** The entry each changed path had before the commit. */
  previous: Map<string, ManifestEntry | undefined>;
}

const entryColumns = 'path, type, blob, target, size, version';

const rootEntry: ManifestEntry = Object.freeze({
  path: '',
  type: 'dir',
  blob: null,
  target: null,
  size: 0,
  version: 0,
});

export class Manifest {
  constructor(
    private readonly db: SqlDatabase,
    readonly uid: string,
    private readonly cache: EntryCache<ManifestEntry>,
    /** The object-store prefix its contents live under (see schema.ts): its uid unless forked. */
    readonly store: string = uid,
  ) {}

  /** The commit running now: what its changes did (commits are synchronous, so one serves). */
  private readonly applied = new CommitChanges();

  /** The committed entry at a path (served from memory when known). */
  entry(path: string): ManifestEntry | undefined {
    const cached = this.cache.get(this.uid, path);
    if (cached !== undefined) return cached ?? undefined;
    const entry = this.read(path);
    this.cache.set(this.uid, path, entry ?? null);
    return entry;
  }

  /**
   * Direct children of a directory, or everything below it when recursive, in path order. The
   * direct children come from memory when known (a search walks every directory), so callers
   * must not change them.
   */
  list(directory: string, recursive: boolean): readonly ManifestEntry[] {
    if (!recursive) {
      const cached = this.cache.children(this.uid, directory);
      if (cached !== undefined) return cached;
      // Named, because without statistics SQLite prefers scanning the primary key's whole
      // workspace (it saves the sort) over the parent index: ten times slower at 5,000 files.
      const children = this.db.query<ManifestEntry>(
        `SELECT ${entryColumns} FROM entries INDEXED BY entries_by_parent WHERE workspace = ? AND parent = ? ORDER BY path`,
        this.uid,
        directory,
      );
      this.cache.setChildren(this.uid, directory, children);
      return children;
    }
    if (directory === '') {
      return this.db.query<ManifestEntry>(
        `SELECT ${entryColumns} FROM entries WHERE workspace = ? ORDER BY path`,
        this.uid,
      );
    }
    // Children of `d` sort between `d/` and `d0` ('0' follows '/'), so the primary key serves the range.
    return this.db.query<ManifestEntry>(
      `SELECT ${entryColumns} FROM entries WHERE workspace = ? AND path > ? AND path < ? ORDER BY path`,
      this.uid,
      `${directory}/`,
      `${directory}0`,
    );
  }

  /**
   * One page of a listing in path order: the entries after `after` (a path below `directory`, or
   * undefined for the first page), at most `limit`. Read from the database each time, so pages
   * taken while writes happen give each entry that stays exactly once.
   */
  listPage(directory: string, recursive: boolean, after: string | undefined, limit: number): ManifestEntry[] {
    if (!recursive) {
      return this.db.query<ManifestEntry>(
        `SELECT ${entryColumns} FROM entries INDEXED BY entries_by_parent
         WHERE workspace = ? AND parent = ? AND path > ? ORDER BY path LIMIT ?`,
        this.uid,
        directory,
        after ?? '',
        limit,
      );
    }
    const low = directory === '' ? '' : `${directory}/`;
    const high = directory === '' ? undefined : `${directory}0`;
    const from = after !== undefined && after > low ? after : low;
    if (high === undefined) {
      return this.db.query<ManifestEntry>(
        `SELECT ${entryColumns} FROM entries WHERE workspace = ? AND path > ? ORDER BY path LIMIT ?`,
        this.uid,
        from,
        limit,
      );
    }
    return this.db.query<ManifestEntry>(
      `SELECT ${entryColumns} FROM entries WHERE workspace = ? AND path > ? AND path < ? ORDER BY path LIMIT ?`,
      this.uid,
      from,
      high,
      limit,
    );
  }

  /** Whether any entry is a symbolic link: a scan that stops at the first, remembered until the next commit. */
  holdsLinks(): boolean {
    const key = `${this.stamp}:holds-links`;
    const known = this.cache.view(key);
    if (typeof known === 'boolean') return known;
    const holds =
      this.db.query(`SELECT 1 AS one FROM entries WHERE workspace = ? AND type = 'symlink' LIMIT 1`, this.uid).length >
      0;
    this.cache.setView(key, holds, 1);
    return holds;
  }

  /** Names the entries as they are now: it changes with every commit (in this process, which owns the database). */
  get stamp(): string {
    return `${this.uid}#${this.cache.generation(this.uid)}`;
  }

  /** A value derived from the entries, remembered under a key that includes the stamps it was computed at. */
  view(key: string): unknown {
    return this.cache.view(key);
  }

  setView(key: string, value: unknown, weight: number): void {
    this.cache.setView(key, value, weight);
  }

  /** Applies every change in one transaction: all land, or none when any precondition fails. */
  commit(changes: readonly ManifestChange[], inTransaction?: (version: number) => void): CommitResult {
    this.applied.clear();
    try {
      return this.transact(changes, inTransaction);
    } finally {
      this.cache.forget(this.uid, this.applied.touched);
      this.applied.clear();
    }
  }

  private transact(
    changes: readonly ManifestChange[],
    inTransaction: ((version: number) => void) | undefined,
  ): CommitResult {
    return this.db.transaction(() => {
      const workspace = this.db.query<{ version: number; files: number; bytes: number }>(
        'SELECT version, files, bytes FROM workspaces WHERE uid = ?',
        this.uid,
      )[0];
      if (!workspace)
        throw new ToolError(
          'not_found',
          'The workspace was deleted while this call ran; create it again with PUT /v1/workspaces/{ws}.',
        );
      const stats = { version: workspace.version + 1, files: workspace.files, bytes: workspace.bytes };
      const previous = new Map<string, ManifestEntry | undefined>();
      const rows = new CommitRows(this.db, this.uid);
      rows.prefetch(changes.map((change) => change.path));
      for (const change of changes) {
        const current = change.path === '' ? rootEntry : rows.read(change.path);
        if (!previous.has(change.path)) previous.set(change.path, current);
        this.applied.apply(change, current, stats, rows);
      }
      rows.flush();
      this.db.query(
        'UPDATE workspaces SET version = ?, files = ?, bytes = ? WHERE uid = ?',
        stats.version,
        stats.files,
        stats.bytes,
        this.uid,
      );
      inTransaction?.(stats.version);
      return { version: stats.version, previous };
    });
  }

  /** The entry as committed in SQL, bypassing the cache. */
  private read(path: string): ManifestEntry | undefined {
    if (path === '') return rootEntry;
    return this.db.query<ManifestEntry>(
      `SELECT ${entryColumns} FROM entries WHERE workspace = ? AND path = ?`,
      this.uid,
      path,
    )[0];
  }
}

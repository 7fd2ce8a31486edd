// The files of a git directory, kept in a store: objects in the ObjectStore, small mutable files (refs, HEAD, config) in SQL.
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';

/** Paths are relative to the git directory, `/`-separated, without a leading `/`; directories are implied by the files under them. */
export interface GitFileTable {
  read(path: string): Promise<Uint8Array | undefined>;
  write(path: string, bytes: Uint8Array): Promise<void>;
  remove(path: string): Promise<void>;
  has(path: string): Promise<boolean>;
  /** The names of the files and directories directly inside `dir` (`''` is the git directory itself). */
  children(dir: string): Promise<string[]>;
}

/** Files as objects under a key prefix: content-addressed git objects and packs, written once and read often. */
export class ObjectFiles implements GitFileTable {
  constructor(
    private readonly objects: ObjectStore,
    private readonly prefix: string,
  ) {}

  async read(path: string): Promise<Uint8Array | undefined> {
    return (await this.objects.get(this.prefix + path))?.body;
  }

  async write(path: string, bytes: Uint8Array): Promise<void> {
    await this.objects.put(this.prefix + path, bytes);
  }

  async remove(path: string): Promise<void> {
    await this.objects.delete(this.prefix + path);
  }

  async has(path: string): Promise<boolean> {
    return (await this.objects.head(this.prefix + path)) !== undefined;
  }

  async children(dir: string): Promise<string[]> {
    const under = this.prefix + (dir === '' ? '' : `${dir}/`);
    const names = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await this.objects.list(under, cursor === undefined ? {} : { cursor });
      for (const object of page.objects) names.add(object.key.slice(under.length).split('/')[0]!);
      cursor = page.cursor;
    } while (cursor !== undefined);
    return [...names];
  }
}

/** Small files as rows of one workspace incarnation, so a ref moves in the same SQL transaction as what records it. */
export class SqlFiles implements GitFileTable {
  constructor(
    private readonly db: SqlDatabase,
    private readonly workspaceUid: string,
  ) {}

  async read(path: string): Promise<Uint8Array | undefined> {
    return this.readNow(path);
  }

  /** The file as committed, synchronously: for reads inside a transaction. */
  readNow(path: string): Uint8Array | undefined {
    const row = this.db.query<{ content: Uint8Array }>(
      'SELECT content FROM git_files WHERE workspace = ? AND path = ?',
      this.workspaceUid,
      path,
    )[0];
    return row?.content;
  }

  async write(path: string, bytes: Uint8Array): Promise<void> {
    this.writeNow(path, bytes);
  }

  writeNow(path: string, bytes: Uint8Array): void {
    this.db.query(
      'INSERT INTO git_files (workspace, path, content) VALUES (?, ?, ?) ON CONFLICT (workspace, path) DO UPDATE SET content = excluded.content',
      this.workspaceUid,
      path,
      bytes,
    );
  }

  async remove(path: string): Promise<void> {
    this.db.query('DELETE FROM git_files WHERE workspace = ? AND path = ?', this.workspaceUid, path);
  }

  async has(path: string): Promise<boolean> {
    return (
      this.db.query('SELECT 1 AS one FROM git_files WHERE workspace = ? AND path = ?', this.workspaceUid, path).length >
      0
    );
  }

  async children(dir: string): Promise<string[]> {
    // Paths under `d` sort between `d/` and `d0` ('0' follows '/'), so the primary key serves the range.
    const rows =
      dir === ''
        ? this.db.query<{ path: string }>('SELECT path FROM git_files WHERE workspace = ?', this.workspaceUid)
        : this.db.query<{ path: string }>(
            'SELECT path FROM git_files WHERE workspace = ? AND path > ? AND path < ?',
            this.workspaceUid,
            `${dir}/`,
            `${dir}0`,
          );
    const start = dir === '' ? 0 : dir.length + 1;
    return [...new Set(rows.map((row) => row.path.slice(start).split('/')[0]!))];
  }
}

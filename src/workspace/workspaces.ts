// Named workspaces: create, describe, delete, and open one for tool calls.
import type { z } from 'zod';
import type { workspaceInfoSchema } from '../contract/http-answers.ts';
import { WORKSPACE_ID_PATTERN } from '../contract/wire-values.ts';
import { ToolError } from '../core/errors.ts';
import { parseVirtualPath } from '../core/virtual-path.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ContentHasher } from '../core/content-hash.ts';
import { CommitGroup } from './commit-group.ts';
import { BlobStore } from './blob-store.ts';
import { EntryCache } from './entry-cache.ts';
import { KeyedLock } from '../core/keyed-lock.ts';
import { Manifest, type ManifestEntry } from './manifest.ts';
import { applyWorkspaceSchema } from './schema.ts';
import { Workspace, type ReadOnlyMount } from './workspace.ts';

export { WORKSPACE_ID_PATTERN };

export interface WorkspaceSettings {
  excludedPaths: string[];
  /** Take a history checkpoint after each successful apply_patch (default false). */
  autoCheckpoint: boolean;
}

/** A workspace as GET /v1/workspaces/{ws} shows it. */
export type WorkspaceInfo = z.output<typeof workspaceInfoSchema>;

/** A read-only root: the files of `workspace` appear read-only at `path` in every other workspace. */
export interface ReadOnlyRoot {
  path: string;
  workspace: string;
}

type WorkspaceRow = {
  id: string;
  uid: string;
  created_at: string;
  settings: string;
  version: number;
  files: number;
  bytes: number;
};

export interface WorkspacesOptions {
  /** Other workspaces shown read-only at a path of every workspace. */
  readOnlyRoots?: readonly ReadOnlyRoot[];
  /** Bytes of blob contents kept in memory (default 64 MiB); a home with less memory keeps fewer. */
  blobCacheBytes?: number;
  /** How contents are addressed: WebCrypto unless the home has a faster SHA-256. */
  hashContent?: ContentHasher;
  /** Entries that views derived from manifests (search walks) may hold in all; see EntryCache. */
  viewEntries?: number;
}

export class Workspaces {
  private readonly blobs: BlobStore;
  private readonly writeLock = new KeyedLock();
  private readonly commits: CommitGroup;
  private readonly entryCache: EntryCache<ManifestEntry>;
  /** Rows by id for open(); only this class creates, alters and deletes them. */
  private readonly rows = new Map<string, WorkspaceRow>();
  private readonly parsedSettings = new WeakMap<WorkspaceRow, WorkspaceSettings>();
  private readonly deleteListeners: ((uid: string) => void)[] = [];

  private readonly readOnlyRoots: readonly ReadOnlyRoot[];

  constructor(
    private readonly db: SqlDatabase,
    objects: ObjectStore,
    options: WorkspacesOptions = {},
  ) {
    applyWorkspaceSchema(db);
    this.commits = new CommitGroup(db);
    this.blobs = new BlobStore(objects, options.blobCacheBytes, options.hashContent);
    this.entryCache = new EntryCache(options.viewEntries);
    this.readOnlyRoots = options.readOnlyRoots ?? [];
    for (const root of this.readOnlyRoots) parseVirtualPath(root.path);
  }

  /**
   * Creates the workspace, or confirms it exists (then the settings given replace those it had).
   * `beforeSettingsChange` runs, inside the transaction, only when an existing workspace's settings
   * would change: it may refuse by throwing.
   */
  create(
    id: string,
    settings?: Partial<WorkspaceSettings>,
    options: { beforeSettingsChange?: () => void } = {},
  ): { created: boolean; info: WorkspaceInfo } {
    assertWorkspaceId(id);
    const given: Partial<WorkspaceSettings> = {};
    if (settings?.excludedPaths)
      given.excludedPaths = settings.excludedPaths.map((path) => parseVirtualPath(path, { directory: true }).path);
    if (settings?.autoCheckpoint !== undefined) given.autoCheckpoint = settings.autoCheckpoint;
    this.rows.delete(id);
    return this.db.transaction(() => {
      const existing = this.row(id);
      if (existing) {
        const current = this.settingsOf(existing);
        const next = { ...current, ...given };
        if (!sameSettings(current, next)) {
          options.beforeSettingsChange?.();
          this.db.query('UPDATE workspaces SET settings = ? WHERE id = ?', JSON.stringify(next), id);
        }
        return { created: false, info: toInfo(existing) };
      }
      const row: WorkspaceRow = {
        id,
        uid: crypto.randomUUID(),
        created_at: new Date().toISOString(),
        settings: JSON.stringify({ excludedPaths: [], autoCheckpoint: false, ...given }),
        version: 0,
        files: 0,
        bytes: 0,
      };
      this.db.query(
        'INSERT INTO workspaces (id, uid, created_at, settings) VALUES (?, ?, ?, ?)',
        row.id,
        row.uid,
        row.created_at,
        row.settings,
      );
      return { created: true, info: toInfo(row) };
    });
  }

  /**
   * The workspace's incarnation: an id of its own that a workspace deleted and created again
   * under the same name never has again, so a runner's copy of the old one is never taken for it.
   */
  incarnation(id: string): string | undefined {
    return WORKSPACE_ID_PATTERN.test(id) ? this.row(id)?.uid : undefined;
  }

  info(id: string): WorkspaceInfo | undefined {
    const row = WORKSPACE_ID_PATTERN.test(id) ? this.row(id) : undefined;
    return row && toInfo(row);
  }

  /** Deletes the workspace and everything in it; false when it did not exist. */
  async delete(id: string): Promise<boolean> {
    const row = WORKSPACE_ID_PATTERN.test(id) ? this.row(id) : undefined;
    if (!row) return false;
    this.rows.delete(id);
    this.db.transaction(() => {
      this.db.query('DELETE FROM entries WHERE workspace = ?', row.uid);
      this.db.query('DELETE FROM workspaces WHERE uid = ?', row.uid);
      for (const listener of this.deleteListeners) listener(row.uid);
    });
    await this.blobs.deleteAll(row.uid);
    return true;
  }

  /**
   * Runs `listener` with the uid of each deleted workspace inside the transaction that deletes it,
   * so what others keep about it (its history) goes with it; its objects go with its blob prefix.
   */
  onDelete(listener: (uid: string) => void): void {
    this.deleteListeners.push(listener);
  }

  /** Opens a workspace for tool calls; a workspace that was never created is `not_found`. */
  open(id: string): Workspace {
    const row = WORKSPACE_ID_PATTERN.test(id) ? this.cachedRow(id) : undefined;
    if (!row)
      throw new ToolError('not_found', `Workspace ${id} does not exist; create it with PUT /v1/workspaces/${id}.`, {
        workspace: id,
      });
    const settings = this.settingsOf(row);
    const mounts: ReadOnlyMount[] = [];
    for (const root of this.readOnlyRoots) {
      const source = root.workspace === id ? undefined : this.cachedRow(root.workspace);
      if (source)
        mounts.push({
          path: parseVirtualPath(root.path).path,
          manifest: new Manifest(this.db, source.uid, this.entryCache),
        });
    }
    return new Workspace({
      id,
      manifest: new Manifest(this.db, row.uid, this.entryCache),
      blobs: this.blobs,
      excludedPaths: settings.excludedPaths,
      autoCheckpoint: settings.autoCheckpoint === true,
      mounts,
      writeLock: this.writeLock,
      commits: this.commits,
    });
  }

  private settingsOf(row: WorkspaceRow): WorkspaceSettings {
    let settings = this.parsedSettings.get(row);
    if (!settings) {
      settings = {
        excludedPaths: [],
        autoCheckpoint: false,
        ...(JSON.parse(row.settings) as Partial<WorkspaceSettings>),
      };
      this.parsedSettings.set(row, settings);
    }
    return settings;
  }

  /** The row for open(): uid and settings only change through this class, so memory may serve them. */
  private cachedRow(id: string): WorkspaceRow | undefined {
    let row = this.rows.get(id);
    if (row === undefined) {
      row = this.row(id);
      if (row) this.rows.set(id, row);
    }
    return row;
  }

  private row(id: string): WorkspaceRow | undefined {
    return this.db.query<WorkspaceRow>('SELECT * FROM workspaces WHERE id = ?', id)[0];
  }
}

export function assertWorkspaceId(id: string): void {
  if (!WORKSPACE_ID_PATTERN.test(id)) {
    throw new ToolError(
      'invalid_argument',
      `Workspace id ${JSON.stringify(id)} is invalid; use 1-63 characters of a-z, 0-9, _ and -, starting with a letter or digit.`,
      { workspace: id },
    );
  }
}

function toInfo(row: WorkspaceRow): WorkspaceInfo {
  return { id: row.id, files: row.files, bytes: row.bytes, version: row.version, createdAt: row.created_at };
}

function sameSettings(a: WorkspaceSettings, b: WorkspaceSettings): boolean {
  return (
    a.autoCheckpoint === b.autoCheckpoint &&
    a.excludedPaths.length === b.excludedPaths.length &&
    a.excludedPaths.every((path, index) => path === b.excludedPaths[index])
  );
}

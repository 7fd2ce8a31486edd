// The rows of the workspaces table (a workspace's name, incarnation, store, settings and counts),
// read, cached for open() and written as Workspaces creates, forks and deletes workspaces.
import type { z } from 'zod';
import type { workspaceInfoSchema } from '../contract/http-answers.ts';
import type { forkedWorkspaceSchema } from '../contract/object-calls.ts';
import { WORKSPACE_ID_PATTERN } from '../contract/wire-values.ts';
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';

export interface WorkspaceSettings {
  excludedPaths: string[];
  /** Take a history checkpoint after each successful apply_patch (default false). */
  autoCheckpoint: boolean;
}

/** A workspace as GET /v1/workspaces/{ws} shows it. */
export type WorkspaceInfo = z.output<typeof workspaceInfoSchema>;

/** What a fork takes from its source's workspace row. */
export type ForkedWorkspace = z.output<typeof forkedWorkspaceSchema>;

export type WorkspaceRow = {
  id: string;
  uid: string;
  /** Null in rows made before forks: the store is then the uid. */
  store: string | null;
  created_at: string;
  settings: string;
  version: number;
  files: number;
  bytes: number;
};

export class WorkspaceRows {
  /** Rows by id for open(); only Workspaces creates, alters and deletes them. */
  private readonly rows = new Map<string, WorkspaceRow>();
  private readonly parsedSettings = new WeakMap<WorkspaceRow, WorkspaceSettings>();

  constructor(private readonly db: SqlDatabase) {}

  /** Drops the cached row of `id`, before a change to it. */
  forget(id: string): void {
    this.rows.delete(id);
  }

  /** The row of a workspace that exists; one that was never created (or a name no workspace can have) is `not_found`. */
  existing(id: string, lookup = (name: string) => this.row(name)): WorkspaceRow {
    const row = WORKSPACE_ID_PATTERN.test(id) ? lookup(id) : undefined;
    if (!row)
      throw new ToolError('not_found', `Workspace ${id} does not exist; create it with PUT /v1/workspaces/${id}.`, {
        workspace: id,
      });
    return row;
  }

  assertAbsent(to: string): void {
    if (this.row(to))
      throw new ToolError('conflict', `Workspace ${to} exists already; fork to a new name, or delete it first.`, {
        workspace: to,
      });
  }

  /** A new workspace's row: one created (its counts zero) or a fork (its source's). */
  insert(row: WorkspaceRow): void {
    this.db.query(
      `INSERT INTO workspaces (id, uid, store, created_at, settings, version, files, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.uid,
      row.store,
      row.created_at,
      row.settings,
      row.version,
      row.files,
      row.bytes,
    );
  }

  setSettings(id: string, settings: WorkspaceSettings): void {
    this.db.query('UPDATE workspaces SET settings = ? WHERE id = ?', JSON.stringify(settings), id);
  }

  remove(uid: string): void {
    this.db.query('DELETE FROM workspaces WHERE uid = ?', uid);
  }

  insertFork(to: string, uid: string, workspace: ForkedWorkspace): WorkspaceInfo {
    const row: WorkspaceRow = { id: to, uid, created_at: new Date().toISOString(), ...workspace };
    this.insert(row);
    return toInfo(row);
  }

  /** Whether a workspace of this database reads `store`. */
  storeInUse(store: string): boolean {
    return (
      this.db.query<{ uid: string }>(
        'SELECT uid FROM workspaces WHERE store = ? OR (store IS NULL AND uid = ?) LIMIT 1',
        store,
        store,
      ).length > 0
    );
  }

  settingsOf(row: WorkspaceRow): WorkspaceSettings {
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

  /** The row for open(): uid and settings only change through Workspaces, so memory may serve them. */
  cachedRow(id: string): WorkspaceRow | undefined {
    let row = this.rows.get(id);
    if (row === undefined) {
      row = this.row(id);
      if (row) this.rows.set(id, row);
    }
    return row;
  }

  row(id: string): WorkspaceRow | undefined {
    return this.db.query<WorkspaceRow>('SELECT * FROM workspaces WHERE id = ?', id)[0];
  }
}

export function forkedFrom(source: WorkspaceRow): ForkedWorkspace {
  const { settings, version, files, bytes } = source;
  return { store: storeOf(source), settings, version, files, bytes };
}

export function storeOf(row: WorkspaceRow): string {
  return row.store ?? row.uid;
}

export function toInfo(row: WorkspaceRow): WorkspaceInfo {
  return { id: row.id, files: row.files, bytes: row.bytes, version: row.version, createdAt: row.created_at };
}

export function sameSettings(a: WorkspaceSettings, b: WorkspaceSettings): boolean {
  return (
    a.autoCheckpoint === b.autoCheckpoint &&
    a.excludedPaths.length === b.excludedPaths.length &&
    a.excludedPaths.every((path, index) => path === b.excludedPaths[index])
  );
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

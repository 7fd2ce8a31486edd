// Named workspaces: create, describe, delete, and open one for tool calls.
import { WORKSPACE_ID_PATTERN } from '../contract/wire-values.ts';
import { parseVirtualPath } from '../core/virtual-path.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { ContentHasher } from '../core/content-hash.ts';
import { CommitGroup } from './commit-group.ts';
import { BlobStore } from './blob-store.ts';
import type { SweepResult } from './blob-sweeper.ts';
import { EntryCache } from './entry-cache.ts';
import { ForkReceiver, ForkTransfer } from './fork-transfer.ts';
import { KeyedLock } from '../core/keyed-lock.ts';
import { Manifest, type ManifestEntry } from './manifest.ts';
import { applyWorkspaceSchema } from './schema.ts';
import { DoomedBlobs } from './doomed-blobs.ts';
import type { SharedStoreReader } from './shared-store-reader.ts';
import { StoreSweeps } from './store-sweeps.ts';
import type { StoreFamilies } from './store-families.ts';
import { Workspace, type ReadOnlyMount } from './workspace.ts';
import {
  assertWorkspaceId,
  forkedFrom,
  sameSettings,
  storeOf,
  toInfo,
  WorkspaceRows,
  type WorkspaceInfo,
  type WorkspaceRow,
  type WorkspaceSettings,
} from './workspace-rows.ts';

export { assertWorkspaceId, WORKSPACE_ID_PATTERN };
export type { WorkspaceInfo, WorkspaceSettings };

/** A read-only root: the files of `workspace` appear read-only at `path` in every other workspace. */
export interface ReadOnlyRoot {
  path: string;
  workspace: string;
}

export interface WorkspacesOptions {
  /** Other workspaces shown read-only at a path of every workspace. */
  readOnlyRoots?: readonly ReadOnlyRoot[];
  /** Bytes of blob contents kept in memory (default 64 MiB); a home with less memory keeps fewer. */
  blobCacheBytes?: number;
  /** How contents are addressed: WebCrypto unless the home has a faster SHA-256. */
  hashContent?: ContentHasher;
  /** Entries that views derived from manifests (search walks) may hold in all; see EntryCache. */
  viewEntries?: number;
  /** Where a home whose forks span databases keeps who reads a shared store (store-families.ts); none on the Node home. */
  families?: StoreFamilies;
}

export class Workspaces {
  private readonly blobs: BlobStore;
  private readonly writeLock = new KeyedLock();
  private readonly commits: CommitGroup;
  private readonly entryCache: EntryCache<ManifestEntry>;
  private readonly rows: WorkspaceRows;
  private readonly deleteListeners: ((uid: string) => void)[] = [];
  private readonly forkListeners: ((fromUid: string, toUid: string) => void)[] = [];
  private readonly forks: ForkReceiver;
  /** A fork to or from another database (the Cloudflare home's workspace objects). */
  readonly forkTransfer: ForkTransfer;
  private readonly sweeps: StoreSweeps;

  private readonly readOnlyRoots: readonly ReadOnlyRoot[];
  private readonly families: StoreFamilies | undefined;
  constructor(
    private readonly db: SqlDatabase,
    objects: ObjectStore,
    options: WorkspacesOptions = {},
  ) {
    applyWorkspaceSchema(db);
    this.rows = new WorkspaceRows(db);
    this.commits = new CommitGroup(db);
    const doomed = new DoomedBlobs(db, options.families);
    this.blobs = new BlobStore(objects, options.blobCacheBytes, options.hashContent, undefined, (store, hash) =>
      doomed.claim(store, hash),
    );
    this.entryCache = new EntryCache(options.viewEntries);
    this.forks = new ForkReceiver(db, (uid) => {
      for (const listener of this.deleteListeners) listener(uid);
    });
    this.readOnlyRoots = options.readOnlyRoots ?? [];
    this.families = options.families;
    this.forkTransfer = new ForkTransfer(db, this.rows, this.forks, this.families);
    this.sweeps = new StoreSweeps({
      db,
      objects,
      blobs: this.blobs,
      doomed,
      entryCache: this.entryCache,
      forks: this.forks,
      families: this.families,
    });
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
    this.rows.forget(id);
    return this.db.transaction(() => {
      const existing = this.rows.row(id);
      if (existing) {
        const current = this.rows.settingsOf(existing);
        const next = { ...current, ...given };
        if (!sameSettings(current, next)) {
          options.beforeSettingsChange?.();
          this.rows.setSettings(id, next);
        }
        return { created: false, info: toInfo(existing) };
      }
      const uid = crypto.randomUUID();
      const row: WorkspaceRow = {
        id,
        uid,
        store: uid,
        created_at: new Date().toISOString(),
        settings: JSON.stringify({ excludedPaths: [], autoCheckpoint: false, ...given }),
        version: 0,
        files: 0,
        bytes: 0,
      };
      this.rows.insert(row);
      return { created: true, info: toInfo(row) };
    });
  }

  /**
   * The workspace's incarnation: an id of its own that a workspace deleted and created again
   * under the same name never has again, so a runner's copy of the old one is never taken for it.
   */
  incarnation(id: string): string | undefined {
    return WORKSPACE_ID_PATTERN.test(id) ? this.rows.row(id)?.uid : undefined;
  }

  info(id: string): WorkspaceInfo | undefined {
    const row = WORKSPACE_ID_PATTERN.test(id) ? this.rows.row(id) : undefined;
    return row && toInfo(row);
  }

  /**
   * A new workspace `to` with the files, links, settings and history of `from`, sharing its
   * contents (no content is copied: the fork reads the same store); later changes to either never
   * show in the other. O(entries) rows in one transaction. `to` existing is `conflict`.
   */
  fork(from: string, to: string): WorkspaceInfo {
    assertWorkspaceId(to);
    this.rows.forget(to);
    return this.db.transaction(() => {
      const source = this.rows.existing(from);
      this.rows.assertAbsent(to);
      const uid = crypto.randomUUID();
      this.db.query(
        `INSERT INTO entries (workspace, path, parent, type, blob, target, size, version)
         SELECT ?, path, parent, type, blob, target, size, version FROM entries WHERE workspace = ?`,
        uid,
        source.uid,
      );
      for (const listener of this.forkListeners) listener(source.uid, uid);
      return this.rows.insertFork(to, uid, forkedFrom(source));
    });
  }

  /**
   * Runs `listener` with the uids of each fork's source and the fork inside the transaction that
   * makes it, so what others keep about a workspace (its history) is the fork's too.
   */
  onFork(listener: (fromUid: string, toUid: string) => void): void {
    this.forkListeners.push(listener);
  }

  /**
   * Deletes the workspace and everything in it; false when it did not exist. Its store goes with
   * it unless another workspace of its family of forks still reads it, or may (a fork sent to or
   * received from another database, see fork-transfer.ts: such a store is left in place).
   */
  async delete(id: string): Promise<boolean> {
    const row = WORKSPACE_ID_PATTERN.test(id) ? this.rows.row(id) : undefined;
    if (!row) return false;
    this.rows.forget(id);
    const store = storeOf(row);
    const shared = this.db.transaction(() => {
      this.db.query('DELETE FROM entries WHERE workspace = ?', row.uid);
      this.rows.remove(row.uid);
      for (const listener of this.deleteListeners) listener(row.uid);
      return this.forks.isShared(store) || this.rows.storeInUse(store);
    });
    if (!shared) {
      await this.blobs.deleteAll(store);
      this.sweeps.forgetStore(store);
    } else if (this.forks.isShared(store) && !this.rows.storeInUse(store)) {
      // The last workspace of this database that read a store shared with others: it leaves the
      // family (whose last reader deletes the store). Should the call fail, the store stays: left over, never lost.
      await this.families?.leave(store, row.uid);
    }
    return true;
  }

  /**
   * Runs `listener` with the uids of a store's workspaces when a sweep asks what they refer to
   * besides their entries (history: the contents its checkpoints restore from).
   */
  onReferences(listener: (uids: readonly string[]) => Iterable<string>): void {
    this.sweeps.onReferences(listener);
  }

  /**
   * Deletes contents no workspace has referred to for `graceMs` (see blob-sweeper.ts). A store a
   * fork in another database reads is swept by its family instead (family-sweep.ts): this one
   * cannot see that fork's references, so it only tells the family what changed here.
   */
  sweepBlobs(graceMs: number): Promise<SweepResult> {
    return this.sweeps.sweep(graceMs);
  }

  /** Whether sweepBlobs could delete anything now, or has a family to tell (a home that sweeps on demand asks first). */
  sweepDue(): boolean {
    return this.sweeps.due();
  }

  /** This database's part in the family sweeps of the stores it shares with others. */
  get sharedStores(): SharedStoreReader {
    return this.sweeps.shared;
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
    const row = this.rows.existing(id, (name) => this.rows.cachedRow(name));
    const settings = this.rows.settingsOf(row);
    const mounts: ReadOnlyMount[] = [];
    for (const root of this.readOnlyRoots) {
      const source = root.workspace === id ? undefined : this.rows.cachedRow(root.workspace);
      if (source)
        mounts.push({
          path: parseVirtualPath(root.path).path,
          manifest: new Manifest(this.db, source.uid, this.entryCache, storeOf(source)),
        });
    }
    return new Workspace({
      id,
      manifest: new Manifest(this.db, row.uid, this.entryCache, storeOf(row)),
      blobs: this.blobs,
      excludedPaths: settings.excludedPaths,
      autoCheckpoint: settings.autoCheckpoint === true,
      mounts,
      writeLock: this.writeLock,
      commits: this.commits,
    });
  }
}

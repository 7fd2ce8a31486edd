// One open workspace: path resolution through the guard, file reads, listings and commits.
import type { z } from 'zod';
import type { fileEntrySchema } from '../contract/http-answers.ts';
import { ToolError } from '../core/errors.ts';
import {
  resolvePath,
  type Access,
  type GuardEntry,
  type GuardPolicy,
  PlannedView,
  type ResolvedPath,
} from '../core/path-guard.ts';
import type { BlobStore } from './blob-store.ts';
import type { BlobUploads } from './blob-uploads.ts';
import type { KeyedLock } from '../core/keyed-lock.ts';
import type { CommitGroup } from './commit-group.ts';
import type { CommitResult, Manifest, ManifestChange, ManifestEntry, Precondition } from './manifest.ts';

/** Another workspace's manifest, visible read-only at `path`. */
export interface ReadOnlyMount {
  path: string;
  manifest: Manifest;
}

/** A path through the guard, with the manifest entry found there (the guard returns the view's own). */
export interface WorkspacePath extends ResolvedPath {
  entry: ManifestEntry | undefined;
}

/**
 * A file's content to store: the commit uploads its blob first, then records it. A write that
 * names a `blob` already stored (see `storeBlob`) records it without uploading again.
 */
export type FileChange = { op: 'write'; path: string; content: Uint8Array; expect?: Precondition } | ManifestChange;

/** An entry as a file listing shows it. */
export type ListedEntry = z.output<typeof fileEntrySchema>;

interface WorkspaceParts {
  id: string;
  manifest: Manifest;
  blobs: BlobStore;
  excludedPaths: readonly string[];
  /** Take a history checkpoint after each successful apply_patch. */
  autoCheckpoint: boolean;
  mounts: readonly ReadOnlyMount[];
  writeLock: KeyedLock;
  /** Commits arriving together share a transaction. */
  commits: CommitGroup;
}

export class Workspace {
  readonly id: string;
  private readonly parts: WorkspaceParts;
  /** What the path guard is told of this workspace's rules, made on the first resolve. */
  private policy: GuardPolicy | undefined;

  constructor(parts: WorkspaceParts) {
    this.id = parts.id;
    this.parts = parts;
  }

  /** The id of this incarnation: what its stored rows and objects are keyed by, never reused. */
  get uid(): string {
    return this.parts.manifest.uid;
  }

  /** The object-store prefix id its contents and git objects live under, shared by a family of forks. */
  get store(): string {
    return this.parts.manifest.store;
  }

  get autoCheckpoint(): boolean {
    return this.parts.autoCheckpoint;
  }

  /** Runs the path guard for this workspace: validation, symlinks, containment, deny rules. */
  async resolve(path: unknown, access: Access, options: ResolveOptions = {}): Promise<WorkspacePath> {
    return this.resolveNow(path, access, options);
  }

  /** As `resolve`, synchronously: a refusal is thrown (an archive resolves thousands of paths in turn). */
  resolveNow(path: unknown, access: Access, options: ResolveOptions = {}): WorkspacePath {
    const { planned, ...guardOptions } = options;
    // Made without closures: under tsx each closure made per call costs a property definition (its name).
    const view = planned === undefined ? this : new PlannedView(this, planned);
    this.policy ??= {
      excludedPaths: this.parts.excludedPaths,
      readOnlyRoots: this.parts.mounts.map((mount) => mount.path),
    };
    return resolvePath(view, path, this.policy, { access, ...guardOptions }) as WorkspacePath;
  }

  /**
   * A value derived from what this workspace shows through the guard (its entries, read-only roots,
   * excluded paths), computed once for each state of them. `name` must say everything else the value
   * depends on; `weight` is the number of entries it holds, for the memory bound. A commit while
   * `compute` runs leaves its value under the state it started from, which no later call asks for.
   */
  async derived<T>(name: string, compute: () => Promise<T>, weight: (value: T) => number): Promise<T> {
    const { manifest, mounts, excludedPaths } = this.parts;
    const state = [manifest.stamp, ...mounts.map((mount) => `${mount.path}=${mount.manifest.stamp}`)];
    const key = JSON.stringify([state, excludedPaths, name]);
    const known = manifest.view(key);
    if (known !== undefined) return known as T;
    const value = await compute();
    manifest.setView(key, value, weight(value));
    return value;
  }

  /** The manifest entry at a resolved path, looking into read-only roots where they are mounted. */
  entry(path: string): ManifestEntry | undefined {
    const { manifest, inner } = this.locate(path);
    return manifest.entry(inner);
  }

  async readBytes(path: string, entry: ManifestEntry): Promise<Uint8Array> {
    if (entry.type !== 'file' || entry.blob === null) {
      throw new ToolError('internal', 'Only files have content.');
    }
    return this.parts.blobs.get(this.locate(path).manifest.store, entry.blob);
  }

  /**
   * A page of the entries in a resolved directory (or the whole tree below it), in path order:
   * those after the path `after` (as a listing shows it), at most `limit`, and whether more remain.
   */
  list(
    directory: string,
    recursive: boolean,
    page: { after?: string | undefined; limit: number },
  ): { entries: ListedEntry[]; more: boolean } {
    const { manifest, inner, mountPath } = this.locate(directory);
    const after =
      page.after === undefined || mountPath === undefined
        ? page.after
        : page.after.startsWith(`${mountPath}/`)
          ? page.after.slice(mountPath.length + 1)
          : '';
    const found = manifest.listPage(inner, recursive, after, page.limit + 1);
    const entries = found.slice(0, page.limit).map((entry) => {
      const listed: ListedEntry = {
        path: mountPath === undefined ? entry.path : joinUnder(mountPath, entry.path),
        type: entry.type,
        size: entry.size,
        version: this.formatVersion(entry.version),
      };
      if (entry.type === 'symlink' && entry.target !== null) listed.target = entry.target;
      return listed;
    });
    return { entries, more: found.length > page.limit };
  }

  /** The manifest entries directly in a resolved directory, read-only roots included, with their full paths. */
  entriesIn(directory: string): readonly ManifestEntry[] {
    return this.listed(directory, false);
  }

  /** Every entry below a resolved directory (not the directory itself), read-only roots included, in path order. */
  entriesBelow(directory: string): readonly ManifestEntry[] {
    return this.listed(directory, true);
  }

  /** Every entry of the workspace itself (not of read-only roots), in path order: what a runner materialises. */
  manifestEntries(): readonly ManifestEntry[] {
    return this.parts.manifest.list('', true);
  }

  /** Names the state of the workspace's own entries (manifestEntries): it changes with every commit. */
  get stamp(): string {
    return this.parts.manifest.stamp;
  }

  /** Whether the workspace itself (not a read-only root) holds a symbolic link, without listing it. */
  holdsLinks(): boolean {
    return this.parts.manifest.holdsLinks();
  }

  /** The bytes of a file entry when they are in memory, without waiting (an archive of thousands takes most this way). */
  cachedBytes(path: string, entry: ManifestEntry): Uint8Array | undefined {
    if (entry.type !== 'file' || entry.blob === null) return undefined;
    return this.parts.blobs.cached(this.locate(path).manifest.store, entry.blob);
  }

  /** A blob of this workspace by its id (runners fetch contents by id). */
  blob(hash: string): Promise<Uint8Array> {
    return this.parts.blobs.get(this.parts.manifest.store, hash);
  }

  /** A blob of this workspace when it is in memory, without waiting (a batch of thousands reads most this way). */
  cachedBlob(hash: string): Uint8Array | undefined {
    return this.parts.blobs.cached(this.parts.manifest.store, hash);
  }

  /** The byte size of a blob of this workspace, or undefined when none is stored under the id. */
  blobSize(hash: string): Promise<number | undefined> {
    return this.parts.blobs.size(this.parts.manifest.store, hash);
  }

  /** Blobs a runner uploads in pieces, ahead of a commit that names them. */
  get uploads(): BlobUploads {
    return this.parts.blobs.uploads(this.parts.manifest.store);
  }

  /** Stores content ahead of a commit that names it by the id returned, so many files need not sit in memory at once. */
  storeBlob(content: Uint8Array): Promise<string> {
    return this.parts.blobs.put(this.parts.manifest.store, content);
  }

  /**
   * Stores many contents at once ahead of a commit that names them: their ids, in order (see
   * storeBlob). `onDurabilityCell` hears the ids early, with a cell that tells when they are
   * durable, where the object store can tell it so (BlobStore.putMany).
   */
  storeBlobs(
    contents: readonly Uint8Array[],
    onDurabilityCell?: (blobs: readonly string[], cell: Int32Array) => void,
  ): Promise<string[]> {
    return this.parts.blobs.putMany(this.parts.manifest.store, contents, onDurabilityCell);
  }

  /**
   * Uploads new contents, then commits every change in one manifest transaction; `inTransaction`
   * runs inside it, so what it records lands exactly when the changes do.
   */
  async commit(changes: readonly FileChange[], inTransaction?: (version: number) => void): Promise<CommitResult> {
    // The contents written are kept from the blob sweeper until the commit has landed or failed.
    const releases: (() => void)[] = [];
    let ended = false;
    try {
      // Changes that name their blobs (an archive's thousands) need no upload, nor a promise each.
      const uploads = changes.some((change) => change.op === 'write' && 'content' in change);
      const manifestChanges = !uploads
        ? (changes as readonly ManifestChange[])
        : await Promise.all(
            changes.map(async (change): Promise<ManifestChange> => {
              if (change.op !== 'write' || !('content' in change)) return change;
              const { hash: blob, release } = await this.parts.blobs.putForCommit(
                this.parts.manifest.store,
                change.content,
              );
              // A put ending after another failed (the commit is over) lets go at once.
              if (ended) release();
              else releases.push(release);
              const write: ManifestChange = { op: 'write', path: change.path, blob, size: change.content.byteLength };
              return change.expect ? { ...write, expect: change.expect } : write;
            }),
          );
      return await this.parts.commits.run(() => this.parts.manifest.commit(manifestChanges, inTransaction));
    } finally {
      ended = true;
      for (const release of releases) release();
    }
  }

  /** Queues writers of the same path in this process, so they take turns instead of conflicting. */
  withWriteLock<T>(path: string, work: () => Promise<T>): Promise<T> {
    return this.parts.writeLock.run(`${this.parts.manifest.uid}\u0000${path}`, work);
  }

  formatVersion(version: number): string {
    return `${version}.${this.parts.manifest.uid.slice(0, 8)}`;
  }

  /** The numeric version behind a version string of this workspace incarnation, if it is one. */
  parseVersion(version: string): number | undefined {
    const match = /^(\d+)\.([0-9a-f]{8})$/.exec(version);
    if (!match || match[2] !== this.parts.manifest.uid.slice(0, 8)) return undefined;
    return Number(match[1]);
  }

  private listed(directory: string, recursive: boolean): readonly ManifestEntry[] {
    const { manifest, inner, mountPath } = this.locate(directory);
    const entries = manifest.list(inner, recursive);
    if (mountPath === undefined) return entries;
    return entries.map((entry) => ({ ...entry, path: joinUnder(mountPath, entry.path) }));
  }

  private locate(path: string): { manifest: Manifest; inner: string; mountPath?: string } {
    for (const mount of this.parts.mounts) {
      if (path === mount.path) return { manifest: mount.manifest, inner: '', mountPath: mount.path };
      if (path.startsWith(`${mount.path}/`)) {
        return { manifest: mount.manifest, inner: path.slice(mount.path.length + 1), mountPath: mount.path };
      }
    }
    return { manifest: this.parts.manifest, inner: path };
  }
}

function joinUnder(base: string, path: string): string {
  return base === '' ? path : `${base}/${path}`;
}

export interface ResolveOptions {
  directory?: boolean;
  followFinalSymlink?: boolean;
  /** Entries a commit being planned will leave, seen before the manifest's (undefined: the manifest's own). */
  planned?: (path: string) => GuardEntry | undefined;
}

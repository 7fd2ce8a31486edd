// A runner-local copy of one workspace: materialised from the manifest, scanned for what a command changed.
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { parseVirtualPath } from '../../core/virtual-path.ts';
import type { RunnerChange } from '../../workspace/sync-changes.ts';
import type { BlobFiles } from './blob-files.ts';

/** Where the sandbox mounts the workspace; absolute link targets under it point into the workspace. */
export const SANDBOX_WORKSPACE = '/workspace';

export interface MirrorEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  blob: string | null;
  target: string | null;
  version: number;
  /** Bytes of a file, when known: lets a cold copy fetch its blobs in batches. */
  size?: number;
}

/** A change found on disk: exactly what the server's sync-back commits. */
export type MirrorChange = RunnerChange;

export interface ScanResult {
  changes: MirrorChange[];
  /** Paths on disk that cannot become workspace entries (bad names, sockets, ...), with why. */
  skipped: { path: string; reason: string }[];
}

/** What the mirror knows is on disk for a path: the manifest entry it came from, and the file's stat. */
interface Known {
  entry: MirrorEntry;
  /** For files: size, mtime and inode when last written or scanned, to skip rehashing unchanged files. */
  stamp?: string;
}

export class WorkspaceMirror {
  private known = new Map<string, Known>();
  /** The workspace version the copy equals, when known: a job at this version needs no materialise. */
  version: number | undefined;

  constructor(
    readonly root: string,
    private readonly blobs: BlobFiles,
  ) {}

  /**
   * Makes the directory equal the manifest. Every path and link target is checked before anything
   * is written; a link whose target would leave the workspace is not created on disk.
   */
  async materialise(
    entries: readonly MirrorEntry[],
    fetchBlob: (hash: string) => Promise<Uint8Array>,
    fetchBlobs?: (hashes: string[]) => Promise<Map<string, Uint8Array>>,
  ): Promise<void> {
    const wanted = new Map<string, MirrorEntry>();
    for (const entry of entries) {
      if (parseVirtualPath(entry.path).path !== entry.path || entry.path === '') throw new Error(`manifest path ${JSON.stringify(entry.path)} is not canonical`);
      if (entry.type === 'file' && (entry.blob === null || !/^[0-9a-f]{64}$/.test(entry.blob))) throw new Error(`file ${entry.path} has no valid blob`);
      wanted.set(entry.path, entry);
    }
    await mkdir(this.root, { recursive: true });
    // Fetch what the cache lacks side by side; one at a time, a cold workspace of thousands of files waits on round trips.
    const changed = [...wanted.values()].filter((entry) => entry.type === 'file' && this.known.get(entry.path)?.entry.blob !== entry.blob);
    if (fetchBlobs) await this.blobs.prefetch(changed.map((entry) => ({ hash: entry.blob!, size: entry.size ?? Number.MAX_SAFE_INTEGER })), fetchBlobs);
    const needed = [...new Set(changed.map((entry) => entry.blob!))];
    await inParallel(needed, BLOB_FETCHES, (hash) => this.blobs.file(hash, fetchBlob));
    // Remove what the manifest no longer has (or has as another type), deepest first.
    const stale = [...this.known.keys()].filter((path) => wanted.get(path)?.type !== this.known.get(path)!.entry.type).sort().reverse();
    for (const path of stale) {
      await rm(join(this.root, path), { recursive: true, force: true });
      this.known.delete(path);
    }
    // Parents sort before their children.
    for (const entry of [...wanted.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      const known = this.known.get(entry.path)?.entry;
      const host = join(this.root, entry.path);
      if (entry.type === 'dir') {
        // A command may have swapped a directory for a link: files are written below it next, and
        // must never be written through a link to somewhere else on the host.
        const onDisk = await lstat(host).catch(() => undefined);
        if (onDisk && !onDisk.isDirectory()) {
          await rm(host, { force: true, recursive: true });
          this.forgetTree(entry.path);
        }
        if (!onDisk?.isDirectory()) await mkdir(host, { recursive: true });
      } else if (entry.type === 'file') {
        const onDisk = await lstat(host).catch(() => undefined);
        if (this.known.get(entry.path)?.entry.blob !== entry.blob || !onDisk?.isFile()) {
          await mkdir(dirname(host), { recursive: true });
          await rm(host, { force: true, recursive: true });
          await this.blobs.copyTo(entry.blob!, host, fetchBlob);
        }
      } else if (known?.target !== entry.target) {
        await mkdir(dirname(host), { recursive: true });
        await rm(host, { force: true, recursive: true });
        const diskTarget = toDiskTarget(entry.path, entry.target ?? '');
        if (diskTarget !== undefined) await symlink(diskTarget, host);
      }
      this.known.set(entry.path, { entry, stamp: entry.type === 'file' ? await stampOf(host) : undefined });
    }
  }

  /** What the command changed since materialise, as changes based on the versions it started from. */
  async scan(): Promise<ScanResult> {
    const changes: MirrorChange[] = [];
    const skipped: ScanResult['skipped'] = [];
    const seen = new Set<string>();
    const walk = async (relative: string): Promise<void> => {
      const names = (await readdir(join(this.root, relative)).catch(() => [] as string[])).sort();
      // One directory's entries are stat'ed side by side (the thread pool overlaps them), then read in order.
      const stats = await Promise.all(names.map((name) => lstat(join(this.root, relative, name)).catch(() => undefined)));
      for (const [index, name] of names.entries()) {
        const path = relative === '' ? name : `${relative}/${name}`;
        const host = join(this.root, path);
        let valid = true;
        try {
          valid = parseVirtualPath(path).path === path;
        } catch {
          valid = false;
        }
        if (!valid) {
          skipped.push({ path, reason: 'the name is not a valid workspace path (control characters, backslash or non-NFC)' });
          continue;
        }
        const stat = stats[index];
        // Gone between the listing and the stat: a deletion, which the known-but-unseen pass reports.
        if (!stat) continue;
        const known = this.known.get(path);
        const baseVersion = known?.entry.version ?? null;
        seen.add(path);
        if (stat.isDirectory()) {
          if (known?.entry.type !== 'dir') changes.push({ op: 'mkdir', path });
          await walk(path);
        } else if (stat.isSymbolicLink()) {
          const target = fromDiskTarget(path, await readlink(host), this.root);
          if (known?.entry.type !== 'symlink' || known.entry.target !== target) changes.push({ op: 'symlink', path, target, baseVersion });
        } else if (stat.isFile()) {
          const stamp = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
          if (known?.entry.type === 'file' && known.stamp === stamp) continue;
          const content = await readFile(host);
          if (known?.entry.type === 'file' && known.entry.blob === sha256(content)) {
            known.stamp = stamp;
            continue;
          }
          changes.push({ op: 'write', path, content, baseVersion });
        } else {
          skipped.push({ path, reason: 'only files, directories and symlinks are kept' });
        }
      }
    };
    await walk('');
    // Deleted: known but gone, children before parents.
    for (const [path, known] of [...this.known].sort(([a], [b]) => (a < b ? 1 : -1))) {
      if (!seen.has(path)) changes.push({ op: 'delete', path, baseVersion: known.entry.version });
    }
    return { changes, skipped };
  }

  /** Records entries as committed (after sync-back), so the next scan compares against them. */
  async accept(entries: readonly MirrorEntry[]): Promise<void> {
    for (const entry of entries) {
      this.known.set(entry.path, { entry, stamp: entry.type === 'file' ? await stampOf(join(this.root, entry.path)).catch(() => undefined) : undefined });
    }
  }

  /** Forgets paths (sync-back deleted them, or could not commit them), so materialise rewrites them. */
  forget(paths: Iterable<string>): void {
    for (const path of paths) this.known.delete(path);
  }

  private forgetTree(path: string): void {
    for (const known of [...this.known.keys()]) if (known === path || known.startsWith(`${path}/`)) this.known.delete(known);
  }
}

const BLOB_FETCHES = 16;

async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function stampOf(host: string): Promise<string> {
  const stat = await lstat(host);
  return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
}

/**
 * A manifest target as a relative link on disk, or undefined when it would leave the workspace
 * (such links are stored, and refused by the guard on use, but never created where a command can follow them).
 */
export function toDiskTarget(linkPath: string, target: string): string | undefined {
  if (target === '') return undefined;
  const parent = linkPath.split('/').slice(0, -1);
  // Resolved lexically, segment by segment: `..` above the root (which posix.normalize would swallow) is an escape.
  const resolved = target.startsWith('/') ? [] : [...parent];
  for (const name of target.split('/')) {
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (resolved.length === 0) return undefined;
      resolved.pop();
    } else {
      resolved.push(name);
    }
  }
  const relative = posix.relative(`/${parent.join('/')}`, `/${resolved.join('/')}`);
  return relative === '' ? '.' : relative;
}

/**
 * A target read from disk in the manifest's terms: relative targets as they are; absolute ones into
 * the workspace (the sandbox mount or the mirror's own directory) become workspace-absolute; any
 * other absolute target becomes a relative one that climbs out of the root, so the guard refuses it.
 */
export function fromDiskTarget(linkPath: string, target: string, root: string): string {
  if (!target.startsWith('/')) return target;
  for (const base of [SANDBOX_WORKSPACE, root]) {
    if (target === base) return '/';
    if (target.startsWith(`${base}/`)) return target.slice(base.length);
  }
  const depth = linkPath.split('/').length;
  return `${'../'.repeat(depth)}${target.replace(/^\/+/, '')}`;
}

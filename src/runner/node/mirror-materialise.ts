// Materialising a workspace copy: the manifest's entries checked, then put on disk through a ConfinedTree, in a copy a command may be changing.
import { lchownSync, mkdirSync, symlinkSync } from 'node:fs';
import { isCanonicalPath } from '../../core/virtual-path.ts';
import { concurrently } from '../../core/concurrently.ts';
import { letEventLoopRun, type BlobFiles } from './blob-files.ts';
import type { FileWriters } from './file-writers.ts';
import { isNotThere, type ConfinedTree } from './confined-tree.ts';
import type { Known, MirrorEntry } from './mirror-changes.ts';
import {
  ancestors,
  createFrom,
  listDisk,
  toDiskTarget,
  type CopyOwner,
  type DiskType,
  type FileContent,
} from './mirror-disk.ts';

/** Puts entries on disk as `WorkspaceMirror.materialise` says, keeping the mirror's record `known` of what it put where. */
export class Materialisation {
  constructor(
    private readonly known: Map<string, Known>,
    private readonly blobs: BlobFiles,
    /** Threads that create files off the event loop; without them files are created here. */
    private readonly writers: FileWriters | undefined,
    /** Who owns what is written (see WorkspaceMirror.owner). */
    private readonly owner: CopyOwner | undefined,
  ) {}

  async run(
    tree: ConfinedTree,
    entries: readonly MirrorEntry[],
    fetchBlob: (hash: string) => Promise<Uint8Array>,
    fetchBlobs?: (hashes: string[]) => Promise<Map<string, Uint8Array>>,
  ): Promise<void> {
    const wanted = new Map<string, MirrorEntry>();
    for (const entry of entries) {
      if (!isCanonicalPath(entry.path)) throw new Error(`manifest path ${JSON.stringify(entry.path)} is not canonical`);
      if (entry.type === 'file' && (entry.blob === null || !/^[0-9a-f]{64}$/.test(entry.blob)))
        throw new Error(`file ${entry.path} has no valid blob`);
      wanted.set(entry.path, entry);
    }
    // Every directory the entries need, parents included. None may be a file or a link in the
    // manifest: what lies below it would be written through it.
    const dirs = new Set<string>();
    for (const entry of wanted.values()) {
      if (entry.type === 'dir') dirs.add(entry.path);
      for (let slash = entry.path.indexOf('/'); slash !== -1; slash = entry.path.indexOf('/', slash + 1)) {
        const parent = entry.path.slice(0, slash);
        const type = wanted.get(parent)?.type ?? 'dir';
        if (type !== 'dir')
          throw new Error(
            `manifest path ${JSON.stringify(entry.path)} lies below the ${type} ${JSON.stringify(parent)}`,
          );
        dirs.add(parent);
      }
    }
    const onDisk = await listDisk(tree, dirs);
    // Remove what the manifest no longer has (or has as another type), deepest first. Only what the
    // listing found is removed: it lies in real directories, so nothing is removed through a link.
    const removedDirs = new Set<string>();
    for (const path of [...this.known.keys()]
      .filter((path) => wanted.get(path)?.type !== this.known.get(path)!.entry.type)
      .sort()
      .reverse()) {
      const type = onDisk.get(path);
      if (type !== undefined) {
        tree.remove(path);
        onDisk.delete(path);
        if (type === 'dir') removedDirs.add(path);
      }
      this.known.delete(path);
    }
    if (removedDirs.size > 0) {
      for (const path of [...onDisk.keys()])
        if (ancestors(path).some((parent) => removedDirs.has(parent))) onDisk.delete(path);
    }
    // The disk work from here on is blocking calls, a few milliseconds at a time (see BlobFiles.fetchMissing).
    // Directories first, parents before children (a parent sorts before what lies in it), each made once.
    for (const path of [...dirs].sort()) {
      await letEventLoopRun();
      this.putDir(tree, path, onDisk.get(path));
    }
    for (const entry of wanted.values()) if (entry.type === 'dir') this.known.set(entry.path, { entry });
    // What the listing found where a file or link is wanted is replaced; what it did not find is created.
    const files: Placement[] = [];
    for (const entry of wanted.values()) {
      if (entry.type === 'dir') continue;
      const known = this.known.get(entry.path);
      const disk = onDisk.get(entry.path);
      if (entry.type === 'file') {
        if (known?.entry.blob === entry.blob && disk === 'file')
          this.known.set(entry.path, { entry, stamp: known.stamp });
        else files.push({ entry, occupied: disk !== undefined });
        continue;
      }
      const diskTarget = toDiskTarget(entry.path, entry.target ?? '');
      if (known?.entry.target === entry.target && (disk === 'symlink' || diskTarget === undefined)) {
        this.known.set(entry.path, { entry });
        continue;
      }
      await letEventLoopRun();
      await this.place(tree, { entry, occupied: disk !== undefined }, (host) => {
        if (diskTarget !== undefined) {
          symlinkSync(diskTarget, host);
          this.own(host);
        }
        return undefined;
      });
    }
    // Blobs fetched in batches are written straight to their files as they arrive (and cached);
    // the rest are copied from the cache, fetched into it first when absent.
    const byBlob = new Map<string, Placement[]>();
    for (const file of files) {
      const same = byBlob.get(file.entry.blob!);
      if (same) same.push(file);
      else byBlob.set(file.entry.blob!, [file]);
    }
    const written = fetchBlobs
      ? await this.blobs.fetchMissing(
          files.map((file) => ({ hash: file.entry.blob!, size: file.entry.size ?? Number.MAX_SAFE_INTEGER })),
          fetchBlobs,
          (arrivals) =>
            this.putFiles(
              tree,
              arrivals.flatMap(({ hash, bytes }) => byBlob.get(hash)!.map((placement) => ({ placement, bytes }))),
            ),
        )
      : new Set<string>();
    const rest = files.filter((file) => !written.has(file.entry.blob!));
    const cachedFiles = new Map<string, string>();
    await concurrently([...new Set(rest.map((file) => file.entry.blob!))], BLOB_FETCHES, async (hash) => {
      cachedFiles.set(hash, await this.blobs.file(hash, fetchBlob));
    });
    await this.putFiles(
      tree,
      rest.map((placement) => ({ placement, source: cachedFiles.get(placement.entry.blob!)! })),
    );
  }

  private forgetTree(path: string): void {
    for (const known of [...this.known.keys()])
      if (known === path || known.startsWith(`${path}/`)) this.known.delete(known);
  }

  /** Makes a wanted directory, replacing whatever else is there: files are written below it next, never through a link. */
  private putDir(tree: ConfinedTree, path: string, disk: DiskType | undefined): void {
    if (disk === 'dir') return;
    if (disk !== undefined) {
      tree.remove(path);
      this.forgetTree(path);
    }
    for (let attempt = 0; ; attempt += 1) {
      try {
        const host = tree.at(path);
        mkdirSync(host);
        this.own(host);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Made since the listing (by a command still running): kept if it is a directory, else replaced.
        if (code === 'EEXIST') {
          if (tree.lstat(path)?.isDirectory()) return;
          tree.remove(path);
          this.forgetTree(path);
        } else if (isNotThere(error) && attempt === 0) {
          this.remakeParents(tree, path);
        } else if (isNotThere(error)) {
          return;
        } else {
          throw error;
        }
      }
    }
  }

  /**
   * Puts a file or link where the listing found `occupied`: whatever is there is removed first, and
   * `create` never opens an existing path, so a link planted there is replaced, never followed.
   * The entry is known only once it is on disk whole. When a running command takes away or swaps
   * a directory it lies in meanwhile, the directories are made again and it is tried once more;
   * failing that, it stays unknown (the command is changing that part of the copy).
   */
  private async place(
    tree: ConfinedTree,
    placement: Placement,
    create: (host: string) => string | undefined | Promise<string | undefined>,
  ): Promise<void> {
    const { entry } = placement;
    this.known.delete(entry.path);
    if (placement.occupied) tree.remove(entry.path);
    for (let attempt = 0; ; attempt += 1) {
      try {
        this.known.set(entry.path, { entry, stamp: await create(tree.at(entry.path)) });
        return;
      } catch (error) {
        // Something appeared there since the listing: replaced, not written through.
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt === 0) tree.remove(entry.path);
        else if (isNotThere(error) && attempt === 0) this.remakeParents(tree, entry.path);
        else if (isNotThere(error)) return;
        else throw error;
      }
    }
  }

  /** Gives what was just made at `host` (a path under the tree, never followed) to the owner. */
  private own(host: string): void {
    if (this.owner) lchownSync(host, this.owner.uid, this.owner.gid);
  }

  /** Makes the directories `path` lies in real directories again, looking afresh at each (a command may have swapped one). */
  private remakeParents(tree: ConfinedTree, path: string): void {
    const dirs = ancestors(path);
    if (dirs.length === 0) return;
    tree.forget(dirs[0]!);
    for (const dir of dirs) {
      const stat = tree.lstat(dir);
      if (stat?.isDirectory()) continue;
      if (stat) tree.remove(dir);
      this.forgetTree(dir);
      try {
        const host = tree.at(dir);
        mkdirSync(host);
        this.own(host);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' && !isNotThere(error)) throw error;
      }
    }
  }

  /**
   * Puts files on disk, from their bytes or copied from the cache (a reflink where the filesystem
   * offers one; never linked, since commands may edit a file in place). Those whose path the
   * listing found free go to the writer threads when there are some; the rest, and any whose path
   * was taken since, go through `place`, which replaces what is there.
   */
  private async putFiles(tree: ConfinedTree, files: readonly FileToPut[]): Promise<void> {
    const threaded = this.writers?.usable ? files.filter((file) => !file.placement.occupied) : [];
    const byThreads = new Set(threaded);
    for (const file of files) {
      if (byThreads.has(file)) continue;
      await letEventLoopRun();
      await this.place(tree, file.placement, (host) => createFrom(file, host, file.placement.entry.size, this.owner));
    }
    if (threaded.length === 0) return;
    for (const { placement } of threaded) this.known.delete(placement.entry.path);
    // The threads create each file at a path relative to its parent's descriptor, which the tree keeps open until materialise ends.
    const results = await this.writers!.create(
      threaded.map((file) => ({
        host: tree.at(file.placement.entry.path),
        ...('bytes' in file ? { bytes: file.bytes } : { source: file.source }),
      })),
      this.owner,
    ).catch(
      // The threads failed (what they made is unknown): every file is put here, replacing what is there.
      () => threaded.map(() => ({ code: 'EEXIST', message: 'retried without the writer threads' })),
    );
    for (const [index, result] of results.entries()) {
      const file = threaded[index]!;
      if ('stamp' in result) {
        this.known.set(file.placement.entry.path, { entry: file.placement.entry, stamp: result.stamp });
      } else if (result.code === 'EEXIST' || isNotThere(result)) {
        await letEventLoopRun();
        await this.place(tree, { ...file.placement, occupied: true }, (host) =>
          createFrom(file, host, file.placement.entry.size, this.owner),
        );
      } else {
        throw Object.assign(new Error(`could not create ${file.placement.entry.path}: ${result.message}`), {
          code: result.code,
        });
      }
    }
  }
}

/** A file to put on disk: its bytes, or the cache file holding them. */
type FileToPut = { placement: Placement } & FileContent;

/** Single-blob fetches in flight at once. */
const BLOB_FETCHES = 16;

/** A file or link to put on disk, and whether the listing found something at its path. */
interface Placement {
  entry: MirrorEntry;
  occupied: boolean;
}

// A runner-local copy of one workspace and the record of what it put where, so what a command changed is read by a scan or from an overlay's upper layer.
import { lchownSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobFiles } from './blob-files.ts';
import type { FileWriters } from './file-writers.ts';
import type { OverlayLayers, OverlaySupport } from './overlay.ts';
import { applyUpper, readUpper } from './overlay-upper.ts';
import { removeTree, withTree } from './confined-tree.ts';
import {
  changesInCopy,
  changesInUpper,
  isUnwrittenLink,
  type Known,
  type MirrorEntry,
  type ScanResult,
} from './mirror-changes.ts';
import { Materialisation } from './mirror-materialise.ts';
import { isMissingOrEmpty, stampFrom, type CopyOwner } from './mirror-disk.ts';

export class WorkspaceMirror {
  /** What the mirror wrote (or accepted) at each path, which a scan compares the disk with. */
  readonly known = new Map<string, Known>();
  /** The workspace version the copy equals, when known: a job at this version needs no materialise. */
  version: number | undefined;
  /**
   * Whether the directory holds exactly the known entries and nothing else, so an exec's changes
   * can be read from its upper layer alone. The runner sets it when it knows so (a clean sync, a
   * materialise into an empty directory) and clears it whenever the directory may change unseen.
   */
  exact = false;
  /**
   * Who owns what materialise writes (the commands' user, when the runner is root), set at
   * creation: a copy it wrote from nothing needs no ownership walk afterwards.
   */
  owner: CopyOwner | undefined;

  constructor(
    readonly root: string,
    private readonly blobs: BlobFiles,
    /** Threads that create files off the event loop; without them files are created here. */
    private readonly writers?: FileWriters,
  ) {}

  /**
   * Makes the directory equal the manifest. Every path and link target is checked before anything
   * is written; a link whose target would leave the workspace is not created on disk. Every host
   * operation goes through a ConfinedTree, so nothing is read, written or removed through a link a
   * command left in the copy (at the last component or any parent), and a path found empty is
   * created without further checks.
   */
  async materialise(
    entries: readonly MirrorEntry[],
    fetchBlob: (hash: string) => Promise<Uint8Array>,
    fetchBlobs?: (hashes: string[]) => Promise<Map<string, Uint8Array>>,
  ): Promise<void> {
    await mkdir(this.root, { recursive: true });
    if (this.owner) lchownSync(this.root, this.owner.uid, this.owner.gid);
    await withTree(this.root, (tree) =>
      new Materialisation(this.known, this.blobs, this.writers, this.owner).run(tree, entries, fetchBlob, fetchBlobs),
    );
  }

  /** What the command changed since materialise, as changes based on the versions it started from. */
  async scan(): Promise<ScanResult> {
    return withTree(this.root, (tree) => changesInCopy(this, tree));
  }

  /**
   * Applies an exec's upper overlay layer to the directory and answers what the command changed:
   * read from the layer alone while `exact` holds, else by a full scan. A directory left half
   * applied is discarded whole (into the job's layer directory), so the next materialise starts
   * afresh rather than a scan syncing a mixture.
   */
  async takeUpper(support: OverlaySupport, layers: OverlayLayers): Promise<ScanResult> {
    const upper = await readUpper(support, layers.upper);
    try {
      await withTree(this.root, (tree) => applyUpper(upper, layers, tree));
    } catch (error) {
      await this.discard(join(layers.dir, 'discarded'));
      throw new Error(
        `the command's changes could not be applied to the workspace copy, which was discarded (${(error as Error).message})`,
      );
    }
    if (!this.exact) return this.scan();
    return withTree(this.root, (tree) => changesInUpper(this, tree, upper));
  }

  /** Gives up the directory (moved to `aside`, for the caller to remove) and all that is known of it: the next materialise starts afresh. */
  async discard(aside: string): Promise<void> {
    this.known.clear();
    this.version = undefined;
    this.exact = false;
    await rename(this.root, aside).catch(() => removeTree(this.root));
  }

  /** Whether the directory is missing or empty. */
  holdsNothing(): Promise<boolean> {
    return isMissingOrEmpty(this.root);
  }

  /** Whether a known link is missing on disk because its target would leave the workspace (materialise never creates those). */
  hasUnwrittenLinks(): boolean {
    for (const { entry } of this.known.values()) if (isUnwrittenLink(entry)) return true;
    return false;
  }

  /** Records entries as committed (after sync-back), so the next scan compares against them. */
  async accept(entries: readonly MirrorEntry[]): Promise<void> {
    await withTree(this.root, (tree) => {
      for (const entry of entries) {
        const stat = entry.type === 'file' ? tree.lstat(entry.path) : undefined;
        this.known.set(entry.path, { entry, stamp: stat?.isFile() ? stampFrom(stat) : undefined });
      }
    });
  }

  /** Forgets paths (sync-back deleted them, or could not commit them), so materialise rewrites them. */
  forget(paths: Iterable<string>): void {
    for (const path of paths) this.known.delete(path);
  }
}

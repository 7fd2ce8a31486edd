// How a workspace copy sits on disk: link targets translated both ways, the order of a walk,
// and the stamps that tell whether a file changed.
import {
  closeSync,
  constants,
  copyFileSync,
  fchownSync,
  fstatSync,
  lchownSync,
  lstatSync,
  openSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { copyFile, readdir } from 'node:fs/promises';
import { manifestLinkTarget, relativeLinkTarget } from '../../core/link-target.ts';
import { letEventLoopRun } from './blob-files.ts';
import type { ConfinedTree } from './confined-tree.ts';

/** Where the sandbox mounts the workspace; absolute link targets under it point into the workspace. */
export const SANDBOX_WORKSPACE = '/workspace';

/** Orders paths as a walk of sorted directory listings meets them: segment by segment, a parent before its children. */
export function bySegments(a: string, b: string): number {
  const left = a.split('/');
  const right = b.split('/');
  for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return left.length - right.length;
}

/** Whether a path or one of the directories it lies in is in the set. */
export function withinAny(path: string, roots: ReadonlySet<string>): boolean {
  for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1)) {
    if (roots.has(path.slice(0, end))) return true;
  }
  return false;
}

export type DiskType = 'dir' | 'file' | 'symlink' | 'other';

/**
 * What is on disk, by path: the root and every directory the manifest wants, listed one
 * directory at a time, never through a link (a command may have swapped a directory for one).
 */
export async function listDisk(tree: ConfinedTree, dirs: ReadonlySet<string>): Promise<Map<string, DiskType>> {
  const found = new Map<string, DiskType>();
  const pending = [''];
  for (let relative = pending.pop(); relative !== undefined; relative = pending.pop()) {
    await letEventLoopRun();
    // Gone, a link, or not a directory: nothing below it is on disk.
    const names = tree.readdir(relative);
    for (const name of names) {
      const path = relative === '' ? name.name : `${relative}/${name.name}`;
      const type: DiskType = name.isDirectory()
        ? 'dir'
        : name.isSymbolicLink()
          ? 'symlink'
          : name.isFile()
            ? 'file'
            : 'other';
      found.set(path, type);
      if (type === 'dir' && dirs.has(path)) pending.push(path);
    }
  }
  return found;
}

/** Whether a directory is missing or empty. */
export async function isMissingOrEmpty(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

/** The directories a path lies in, outermost first. */
export function ancestors(path: string): string[] {
  const parts = path.split('/');
  return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('/'));
}

/** Who owns what the runner writes into a copy: the commands' user, when the runner is root. */
export interface CopyOwner {
  uid: number;
  gid: number;
}

/** Creates a file that must not exist yet (a link there is not followed), owned by `owner` when given, and answers its stamp. */
export function createFile(host: string, bytes: Uint8Array, owner?: CopyOwner): string {
  const fd = openSync(host, 'wx');
  try {
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    writeFileSync(fd, bytes);
    return stampFrom(fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** Files up to this size are copied from the cache with a blocking call (see BlobFiles.fetchMissing). */
const BLOCKING_COPY_BYTES = 1024 * 1024;

/**
 * Copies a cache file to a path that must not exist yet (a reflink where the filesystem offers
 * one; never a link, since commands may edit the copy in place) and answers its stamp. A large
 * file is copied through the thread pool, not holding the event loop.
 */
export async function copyCachedFile(
  source: string,
  host: string,
  size: number | undefined,
  owner?: CopyOwner,
): Promise<string> {
  const flags = constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE;
  if ((size ?? Number.MAX_SAFE_INTEGER) <= BLOCKING_COPY_BYTES) copyFileSync(source, host, flags);
  else await copyFile(source, host, flags);
  if (owner) lchownSync(host, owner.uid, owner.gid);
  return stampFrom(lstatSync(host));
}

/** What a new file holds: its bytes, or the cache file holding them. */
export type FileContent = { bytes: Uint8Array } | { source: string };

/** Creates a file that must not exist yet, from its bytes or a cache copy of `size` bytes, and answers its stamp. */
export function createFrom(
  content: FileContent,
  host: string,
  size: number | undefined,
  owner?: CopyOwner,
): string | Promise<string> {
  return 'bytes' in content
    ? createFile(host, content.bytes, owner)
    : copyCachedFile(content.source, host, size, owner);
}

export function stampFrom(stat: Stats): string {
  return `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
}

/**
 * A manifest target as a relative link on disk, or undefined when it would leave the workspace
 * (such links are stored, and refused by the guard on use, but never created where a command can follow them).
 */
export function toDiskTarget(linkPath: string, target: string): string | undefined {
  return relativeLinkTarget(linkPath, target);
}

/** A target read from disk in the manifest's terms (see manifestLinkTarget): the sandbox mount and the mirror's own directory are the workspace. */
export function fromDiskTarget(linkPath: string, target: string, root: string): string {
  return manifestLinkTarget(linkPath, target, [SANDBOX_WORKSPACE, root]);
}

// What a command changed in a runner's workspace copy: the whole copy walked, or only what an
// overlay's upper layer holds, compared with what the mirror knows it put there (workspace-mirror.ts).
import { readlinkSync, type Stats } from 'node:fs';
import type { RunnerChange } from '../../contract/runner-protocol.ts';
import { isCanonicalPath } from '../../core/virtual-path.ts';
import { letEventLoopRun, sha256 } from './blob-files.ts';
import { isNotThere, type ConfinedTree } from './confined-tree.ts';
import { bySegments, fromDiskTarget, stampFrom, toDiskTarget, withinAny } from './mirror-disk.ts';
import type { UpperNode } from './overlay-upper.ts';

/** A workspace entry as the mirror puts it on disk and compares the disk with. */
export interface MirrorEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  blob: string | null;
  target: string | null;
  version: number;
  /** Bytes of a file, when known: lets a cold copy fetch its blobs in batches. */
  size?: number;
}

export interface ScanResult {
  changes: RunnerChange[];
  /** Paths on disk that cannot become workspace entries (bad names, sockets, ...), with why. */
  skipped: { path: string; reason: string }[];
}

/** What the mirror knows is on disk for a path: the manifest entry it came from, and the file's stat. */
export interface Known {
  entry: MirrorEntry;
  /** For files: size, mtime and inode when last written or scanned, to skip rehashing unchanged files. */
  stamp?: string;
}

/** A copy as its changes are read: its directory and what is known of each path in it. */
export interface KnownCopy {
  readonly root: string;
  readonly known: Map<string, Known>;
}

/** What a walk has found so far. */
interface Found {
  changes: RunnerChange[];
  skipped: ScanResult['skipped'];
  seen: Set<string>;
}

/** Every change in the copy: the whole directory walked. */
export async function changesInCopy(copy: KnownCopy, tree: ConfinedTree): Promise<ScanResult> {
  const found: Found = { changes: [], skipped: [], seen: new Set() };
  await walk(copy, tree, '', found);
  return result(copy, found);
}

/**
 * The same changes `changesInCopy` would find, read from an upper layer `applyUpper` put into the
 * directory: only what the layer holds is looked at. Sound only while the copy is exact, since
 * anything on disk the layer does not touch is taken to be what `known` says.
 */
export async function changesInUpper(copy: KnownCopy, tree: ConfinedTree, upper: UpperNode): Promise<ScanResult> {
  const found: Found = { changes: [], skipped: [], seen: new Set() };
  // Paths whose known entries, and all below them, are deleted unless seen again.
  const replaced = new Set<string>();
  const visitLayer = async (node: UpperNode, relative: string): Promise<void> => {
    for (const child of node.children) {
      const path = relative === '' ? child.name : `${relative}/${child.name}`;
      replaced.add(path);
      if (child.kind === 'whiteout') continue;
      if (
        child.kind === 'dir' &&
        !child.opaque &&
        child.source === undefined &&
        copy.known.get(path)?.entry.type === 'dir'
      ) {
        // A directory both layers show: only what the upper layer holds in it changed.
        replaced.delete(path);
        found.seen.add(path);
        await visitLayer(child, path);
        continue;
      }
      await visit(copy, tree, path, tree.lstat(path), found);
    }
  };
  await visitLayer(upper, '');
  found.changes.sort((a, b) => bySegments(a.path, b.path));
  found.skipped.sort((a, b) => bySegments(a.path, b.path));
  return result(copy, found, replaced);
}

/** Walks a directory of the copy (''= the root), visiting every entry below it. */
async function walk(copy: KnownCopy, tree: ConfinedTree, relative: string, found: Found): Promise<void> {
  await letEventLoopRun();
  const names = tree
    .readdir(relative)
    .map((entry) => entry.name)
    .sort();
  const path = (name: string) => (relative === '' ? name : `${relative}/${name}`);
  for (const name of names) await visit(copy, tree, path(name), tree.lstat(path(name)), found);
}

/**
 * Compares one entry on disk with what is known of it; a directory is walked. An entry that
 * turns into a link while it is read (a command still running) is taken as that link.
 */
async function visit(
  copy: KnownCopy,
  tree: ConfinedTree,
  path: string,
  stat: Stats | undefined,
  found: Found,
): Promise<void> {
  const { changes, skipped, seen } = found;
  if (!isCanonicalPath(path)) {
    skipped.push({
      path,
      reason: 'the name is not a valid workspace path (control characters, backslash or non-NFC)',
    });
    return;
  }
  // Gone between the listing and the stat: a deletion, which the known-but-unseen pass reports.
  if (!stat) return;
  const known = copy.known.get(path);
  const baseVersion = known?.entry.version ?? null;
  seen.add(path);
  if (stat.isDirectory()) {
    try {
      tree.dir(path);
    } catch (error) {
      if (!isNotThere(error)) throw error;
      seen.delete(path);
      return visit(copy, tree, path, tree.lstat(path), found);
    }
    if (known?.entry.type !== 'dir') changes.push({ op: 'mkdir', path });
    await walk(copy, tree, path, found);
  } else if (stat.isSymbolicLink()) {
    let disk: string;
    try {
      disk = readlinkSync(tree.at(path));
    } catch (error) {
      if (!isNotThere(error) && (error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
      seen.delete(path);
      return visit(copy, tree, path, tree.lstat(path), found);
    }
    const target = fromDiskTarget(path, disk, copy.root);
    if (known?.entry.type !== 'symlink' || known.entry.target !== target)
      changes.push({ op: 'symlink', path, target, baseVersion });
  } else if (stat.isFile()) {
    const stamp = stampFrom(stat);
    if (known?.entry.type === 'file' && known.stamp === stamp) return;
    let content: Buffer;
    try {
      content = tree.readFile(path);
    } catch (error) {
      if (!isNotThere(error) && (error as NodeJS.ErrnoException).code !== 'EINVAL') throw error;
      seen.delete(path);
      return visit(copy, tree, path, tree.lstat(path), found);
    }
    if (known?.entry.type === 'file' && known.entry.blob === sha256(content)) {
      known.stamp = stamp;
      return;
    }
    changes.push({ op: 'write', path, content, baseVersion });
  } else {
    skipped.push({ path, reason: 'only files, directories and symlinks are kept' });
  }
}

/**
 * The changes found, then deletions: known entries not seen, children before parents; with
 * `within`, only those at or below one of its paths. A link kept off the disk (its target leaves
 * the workspace) is never seen, and is no deletion: no command can have removed it.
 */
function result(copy: KnownCopy, found: Found, within?: ReadonlySet<string>): ScanResult {
  const candidates =
    within === undefined
      ? [...copy.known]
      : within.size === 0
        ? []
        : [...copy.known].filter(([path]) => withinAny(path, within));
  const deleted = candidates
    .filter(([path, known]) => !found.seen.has(path) && !isUnwrittenLink(known.entry))
    .sort(([a], [b]) => (a < b ? 1 : -1));
  for (const [path, known] of deleted) found.changes.push({ op: 'delete', path, baseVersion: known.entry.version });
  return { changes: found.changes, skipped: found.skipped };
}

/** A link whose target would leave the workspace: materialise never creates it on disk. */
export function isUnwrittenLink(entry: MirrorEntry): boolean {
  return entry.type === 'symlink' && toDiskTarget(entry.path, entry.target ?? '') === undefined;
}

// Writes the git tree of a workspace's manifest: a blob per file (hashed once per content), mode 120000 per symlink, a tree per directory.
import { writeBlob, writeTree, type TreeEntry } from 'isomorphic-git';
import { baseName, parentPath } from '../core/virtual-path.ts';
import { sha256Hex } from '../core/content-hash.ts';
import type { ManifestEntry } from '../workspace/manifest.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { concurrently } from '../core/concurrently.ts';
import type { GitObjects } from './git-directory.ts';
import type { HistoryRecords } from './history-records.ts';

export const FILE_MODE = '100644';
export const SYMLINK_MODE = '120000';
export const TREE_MODE = '040000';

/** Store round trips in flight at once while writing objects. */
const PARALLEL = 8;

const encoder = new TextEncoder();

/**
 * The id of the root tree. Directories without a file or symlink below them are left out, as
 * git holds no empty directories.
 */
export async function writeSnapshotTree(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  entries: readonly ManifestEntry[],
): Promise<string> {
  const leaves = entries.filter((entry) => entry.type !== 'dir');
  const oids = new Map<string, string>();
  await concurrently(leaves, PARALLEL, async (entry) => {
    oids.set(entry.path, await blobOid(dir, records, workspace, entry));
  });

  const trees = new Map<string, TreeEntry[]>([['', []]]);
  for (const entry of leaves) {
    for (let ancestor = parentPath(entry.path); !trees.has(ancestor); ancestor = parentPath(ancestor))
      trees.set(ancestor, []);
    trees.get(parentPath(entry.path))!.push({
      mode: entry.type === 'symlink' ? SYMLINK_MODE : FILE_MODE,
      path: baseName(entry.path),
      oid: oids.get(entry.path)!,
      type: 'blob',
    });
  }
  // Deepest first, so each directory's subtrees are written before it; one depth at a time in parallel.
  const byDepth = new Map<number, string[]>();
  for (const path of trees.keys()) {
    const depth = path === '' ? 0 : path.split('/').length;
    byDepth.set(depth, [...(byDepth.get(depth) ?? []), path]);
  }
  let root = '';
  for (const depth of [...byDepth.keys()].sort((a, b) => b - a)) {
    await concurrently(byDepth.get(depth)!, PARALLEL, async (path) => {
      const oid = await writeTree({ fs: dir.fs, gitdir: dir.gitdir, tree: trees.get(path)! });
      if (path === '') root = oid;
      else trees.get(parentPath(path))!.push({ mode: TREE_MODE, path: baseName(path), oid, type: 'tree' });
    });
  }
  return root;
}

/** A file's or a symlink's blob id: known from the map, else written once and recorded. */
async function blobOid(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  entry: ManifestEntry,
): Promise<string> {
  const link = entry.type === 'symlink' ? encoder.encode(entry.target ?? '') : undefined;
  const sha256 = link ? await sha256Hex(link) : entry.blob!;
  const known = records.blobOid(workspace.uid, sha256);
  if (known !== undefined) return known;
  const bytes = link ?? (await workspace.blob(sha256));
  const oid = await writeBlob({ fs: dir.fs, gitdir: dir.gitdir, blob: bytes });
  records.recordBlob(workspace.uid, sha256, oid, bytes.byteLength);
  return oid;
}

// Reads a commit's tree back as a flat list of paths, and the content of its blobs, preferring the workspace's own copy.
import { readBlob, readCommit, readObject, readTag, readTree } from 'isomorphic-git';
import type { Workspace } from '../workspace/workspace.ts';
import type { GitObjects } from './git-directory.ts';
import type { HistoryRecords } from './history-records.ts';
import { SYMLINK_MODE, TREE_MODE } from './snapshot-tree.ts';

/** A file (100644 or 100755), a symlink (120000) or a submodule (160000) at a path of the tree. */
export interface TreeItem {
  path: string;
  mode: string;
  oid: string;
}

/** The tree a commit (or a tag of one) records. */
export async function commitTree(dir: GitObjects, oid: string): Promise<string> {
  let target = oid;
  for (let hops = 0; hops < 8; hops += 1) {
    const { type } = await readObject({
      fs: dir.fs,
      gitdir: dir.gitdir,
      oid: target,
      cache: dir.cache,
      format: 'deflated',
    });
    if (type !== 'tag') break;
    target = (await readTag({ fs: dir.fs, gitdir: dir.gitdir, oid: target, cache: dir.cache })).tag.object;
  }
  return (await readCommit({ fs: dir.fs, gitdir: dir.gitdir, oid: target, cache: dir.cache })).commit.tree;
}

/** Every non-tree entry below `treeOid`, in path order; `onItem` may throw to stop the walk early. */
export async function listTree(
  dir: GitObjects,
  treeOid: string,
  onItem?: (item: TreeItem) => void,
): Promise<TreeItem[]> {
  const items: TreeItem[] = [];
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await readTree({ fs: dir.fs, gitdir: dir.gitdir, oid, cache: dir.cache });
    for (const entry of tree) {
      const path = prefix === '' ? entry.path : `${prefix}/${entry.path}`;
      if (entry.mode === TREE_MODE) {
        await walk(entry.oid, path);
      } else {
        const item = { path, mode: entry.mode, oid: entry.oid };
        onItem?.(item);
        items.push(item);
      }
    }
  };
  await walk(treeOid, '');
  return items.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * A blob's bytes: a file's from the workspace's blob store when the map knows it there (it keeps
 * every blob of the incarnation), anything else (a symlink's target) from the git objects.
 */
export async function blobContent(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  item: Pick<TreeItem, 'mode' | 'oid'>,
): Promise<Uint8Array> {
  const stored = item.mode === SYMLINK_MODE ? undefined : records.contentOf(workspace.uid, item.oid);
  if (stored !== undefined) return workspace.blob(stored.sha256);
  return (await readBlob({ fs: dir.fs, gitdir: dir.gitdir, oid: item.oid, cache: dir.cache })).blob;
}

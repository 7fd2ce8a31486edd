// The workspace changes that make the workspace equal a checkpoint's tree: one commit's worth, each conditional on what is there now.
import { parentPath } from '../core/virtual-path.ts';
import type { Precondition } from '../workspace/manifest.ts';
import type { FileChange, Workspace } from '../workspace/workspace.ts';
import { concurrently } from '../core/concurrently.ts';
import type { GitObjects } from './git-directory.ts';
import type { HistoryRecords } from './history-records.ts';
import { SYMLINK_MODE } from './snapshot-tree.ts';
import { blobContent, type TreeItem } from './tree-listing.ts';

const PARALLEL = 8;

/**
 * Deletions first, deepest first (a directory empties before it goes), then writes and symlinks.
 * Files whose content the workspace's blob store holds are recorded by id, not uploaded again.
 * Directories not on the way to a file or symlink of the checkpoint are deleted, as the
 * checkpoint holds none.
 */
export async function planRestore(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  items: readonly TreeItem[],
): Promise<FileChange[]> {
  const wanted = new Map(items.filter((item) => item.mode !== '160000').map((item) => [item.path, item]));
  const directories = new Set<string>();
  for (const path of wanted.keys()) {
    for (let parent = parentPath(path); parent !== '' && !directories.has(parent); parent = parentPath(parent))
      directories.add(parent);
  }
  const current = new Map(workspace.manifestEntries().map((entry) => [entry.path, entry]));
  const deletes: FileChange[] = [];
  const deleted = new Set<string>();
  for (const entry of current.values()) {
    const keep =
      entry.type === 'dir'
        ? directories.has(entry.path)
        : wanted.has(entry.path) && (wanted.get(entry.path)!.mode === SYMLINK_MODE) === (entry.type === 'symlink');
    if (keep) continue;
    deletes.push({ op: 'delete', path: entry.path, expect: { version: entry.version } });
    deleted.add(entry.path);
  }
  deletes.sort((a, b) => depth(b.path) - depth(a.path));

  const writes: FileChange[] = [];
  await concurrently([...wanted.values()], PARALLEL, async (item) => {
    const entry = deleted.has(item.path) ? undefined : current.get(item.path);
    const expect: Precondition = entry ? { version: entry.version } : { absent: true };
    if (item.mode === SYMLINK_MODE) {
      const target = new TextDecoder().decode(await blobContent(dir, records, workspace, item));
      if (entry?.type !== 'symlink' || entry.target !== target)
        writes.push({ op: 'symlink', path: item.path, target, expect });
      return;
    }
    let stored = records.contentOf(workspace.uid, item.oid);
    if (stored === undefined) {
      // Not seen as workspace content (an object only git has): store it in the workspace first.
      const bytes = await blobContent(dir, records, workspace, item);
      const sha256 = await workspace.storeBlob(bytes);
      records.recordBlob(workspace.uid, sha256, item.oid, bytes.byteLength);
      stored = { sha256, size: bytes.byteLength };
    }
    if (entry?.type !== 'file' || entry.blob !== stored.sha256)
      writes.push({ op: 'write', path: item.path, blob: stored.sha256, size: stored.size, expect });
  });
  writes.sort((a, b) => (a.path < b.path ? -1 : 1));
  return [...deletes, ...writes];
}

function depth(path: string): number {
  return path.split('/').length;
}

// The unified diff from a checkpoint to the workspace as it is now, or to a later checkpoint, in git's layout (a/ and b/, /dev/null, modes, binary files).
import { DiffBudget, fileDiff as unifiedDiff } from '../core/text-diff.ts';
import { WorkBudget } from '../core/work-budget.ts';
import type { ManifestEntry } from '../workspace/manifest.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { GitObjects } from './git-directory.ts';
import type { HistoryRecords } from './history-records.ts';
import { FILE_MODE, SYMLINK_MODE } from './snapshot-tree.ts';
import { blobContent, listTree, type TreeItem } from './tree-listing.ts';

/** One side of a path: its git mode and a way to read its bytes (a symlink's bytes are its target). */
interface Side {
  mode: string;
  read: () => Promise<Uint8Array>;
}

const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function diffToWorkspace(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  treeOid: string,
): Promise<string> {
  const before = new Map((await listTree(dir, treeOid)).map((item) => [item.path, item]));
  const now = new Map(
    workspace
      .manifestEntries()
      .filter((entry) => entry.type !== 'dir')
      .map((entry) => [entry.path, entry]),
  );
  return diffSides(before, now, {
    oldSide: (old) => ({ mode: old.mode, read: () => blobContent(dir, records, workspace, old) }),
    newSide: (current) => currentSide(workspace, current),
    unchanged: (old, current) => unchanged(records, workspace, old, current, dir),
  });
}

/** The unified diff from one checkpoint's tree to another's. */
export async function diffBetweenTrees(
  dir: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  fromTree: string,
  toTree: string,
): Promise<string> {
  const side = (item: TreeItem): Side => ({ mode: item.mode, read: () => blobContent(dir, records, workspace, item) });
  const [before, after] = await Promise.all(
    [fromTree, toTree].map(async (tree) => new Map((await listTree(dir, tree)).map((item) => [item.path, item]))),
  );
  return diffSides(before!, after!, {
    oldSide: side,
    newSide: side,
    // Git names equal content (and mode) by equal object ids.
    unchanged: async (old, current) => old.oid === current.oid && old.mode === current.mode,
  });
}

interface Sides<Old, New> {
  oldSide: (item: Old) => Side;
  newSide: (item: New) => Side;
  unchanged: (old: Old, current: New) => Promise<boolean>;
}

async function diffSides<Old, New>(
  before: ReadonlyMap<string, Old>,
  after: ReadonlyMap<string, New>,
  sides: Sides<Old, New>,
): Promise<string> {
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // Linear in the texts whatever changed (minimal diffs while a shared budget lasts, block
  // replaces after), and the event loop runs every few milliseconds: a large diff holds no one up.
  const work: Work = { cells: new DiffBudget(), clock: new WorkBudget(Number.POSITIVE_INFINITY) };
  let diff = '';
  for (const path of paths) {
    const old = before.get(path);
    const current = after.get(path);
    if (old !== undefined && current !== undefined && (await sides.unchanged(old, current))) continue;
    const oldSide = old === undefined ? undefined : sides.oldSide(old);
    const newSide = current === undefined ? undefined : sides.newSide(current);
    // A file that became a symlink (or back) is a deletion and an addition, as git shows it.
    if (
      oldSide &&
      newSide &&
      oldSide.mode !== newSide.mode &&
      (oldSide.mode === SYMLINK_MODE || newSide.mode === SYMLINK_MODE)
    ) {
      diff += await fileDiff(path, oldSide, undefined, work);
      diff += await fileDiff(path, undefined, newSide, work);
    } else {
      diff += await fileDiff(path, oldSide, newSide, work);
    }
  }
  return diff;
}

async function unchanged(
  records: HistoryRecords,
  workspace: Workspace,
  old: TreeItem,
  current: ManifestEntry,
  dir: GitObjects,
): Promise<boolean> {
  if (current.type === 'symlink') {
    return (
      old.mode === SYMLINK_MODE &&
      new TextDecoder().decode(await blobContent(dir, records, workspace, old)) === current.target
    );
  }
  return old.mode !== SYMLINK_MODE && records.blobOid(workspace.uid, current.blob!) === old.oid;
}

function currentSide(workspace: Workspace, entry: ManifestEntry): Side {
  if (entry.type === 'symlink') return { mode: SYMLINK_MODE, read: async () => encoder.encode(entry.target ?? '') };
  return { mode: FILE_MODE, read: () => workspace.blob(entry.blob!) };
}

/** What the diffs of one answer share: the budget of minimal-diff cells, and the clock that lets the event loop run. */
interface Work {
  cells: DiffBudget;
  clock: WorkBudget;
}

async function fileDiff(path: string, old: Side | undefined, current: Side | undefined, work: Work): Promise<string> {
  const oldName = old ? `a/${path}` : '/dev/null';
  const newName = current ? `b/${path}` : '/dev/null';
  let header = `diff --git a/${path} b/${path}\n`;
  if (!old) header += `new file mode ${current!.mode}\n`;
  else if (!current) header += `deleted file mode ${old.mode}\n`;
  else if (old.mode !== current.mode) header += `old mode ${old.mode}\nnew mode ${current.mode}\n`;
  const before = old ? asText(await old.read()) : '';
  const after = current ? asText(await current.read()) : '';
  if (before === undefined || after === undefined) return `${header}Binary files ${oldName} and ${newName} differ\n`;
  if (before === after) return header;
  return header + (await unifiedDiff(oldName, newName, before, after, undefined, work.cells, work.clock));
}

/** The bytes as text, or undefined for binary content (a NUL byte, as git decides, or bytes that are not UTF-8). */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

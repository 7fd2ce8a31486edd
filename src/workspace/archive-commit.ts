// Lands an unpacked archive in one commit: merge writes over what is there, replace also removes what the archive lacks.
import { isToolError } from '../core/errors.ts';
import { isBelow, parentPath } from '../core/virtual-path.ts';
import type { ArchiveContents, ArchivedEntry } from './archive-unpack.ts';
import type { ManifestChange } from './manifest.ts';
import type { Workspace } from './workspace.ts';

export type ArchiveMode = 'merge' | 'replace';

export interface ArchiveCommit {
  /** The version the commit made; null when the workspace already held exactly what the archive gives. */
  version: number | null;
  /** Entries removed: those replace found missing from the archive, and those an entry of another type replaced. */
  deleted: number;
}

/** Plans made again when a write landing meanwhile made the commit fail. */
const MAX_ATTEMPTS = 5;
/**
 * How long a commit, its statements run, blocks the event loop for its contents to become durable
 * before it gives up its transaction and waits for them as any other: about what running its
 * statements again would take (an archive of 5,000 files: 30-60 ms).
 */
const DURABLE_WAIT_MS = 25;

/** Thrown inside the commit's transaction, to roll it back, when its contents are not yet durable. */
const NOT_YET_DURABLE = new Error('The archive contents are not durable yet.');

/**
 * Commits what the archive gives below the resolved directory `root`, all of it or nothing. An
 * entry replaces one of another type at its path (a directory with everything in it); files and
 * links that are already exactly so are left as they are, versions included.
 *
 * The contents may still be being made durable (the last set's sync): the commit runs its
 * statements meanwhile, then, still inside its transaction, checks that every content is durable
 * (`contents.durableNow`, waiting a little); only then does its transaction go on to commit, so no
 * version ever names content that is not durable. When they are not (a slow sync, a failed write,
 * a store that cannot tell it so), the transaction is rolled back, the commit waits for
 * `contents.settled` (which throws a failure) and runs again. A commit's transaction is
 * synchronous, so no other call runs between its statements and that check. It may answer before
 * `contents.settled` resolves (the store has yet to hear its threads' answers).
 */
export async function commitArchive(
  workspace: Workspace,
  entries: ReadonlyMap<string, ArchivedEntry>,
  root: string,
  mode: ArchiveMode,
  contents: ArchiveContents,
): Promise<ArchiveCommit> {
  // Without every blob known there is nothing to plan with: the contents are waited for first.
  let durable = !contents.blobsKnown();
  if (durable) await contents.settled;
  const durableNow = () => {
    if (!contents.durableNow(DURABLE_WAIT_MS)) throw NOT_YET_DURABLE;
  };
  for (let attempt = 1; ; attempt += 1) {
    const { changes, deleted } = archiveChanges(workspace, entries, root, mode);
    if (changes.length === 0) return { version: null, deleted: 0 };
    try {
      return { version: (await workspace.commit(changes, durable ? undefined : durableNow)).version, deleted };
    } catch (error) {
      if (error === NOT_YET_DURABLE) {
        await contents.settled;
        durable = true;
        attempt -= 1;
        continue;
      }
      // A write landed between the plan and the commit (a path gone, a directory filled): plan again against it.
      const raced =
        isToolError(error) && ['conflict', 'not_found', 'is_directory', 'invalid_argument'].includes(error.code);
      if (!raced || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

function archiveChanges(
  workspace: Workspace,
  entries: ReadonlyMap<string, ArchivedEntry>,
  root: string,
  mode: ArchiveMode,
): { changes: ManifestChange[]; deleted: number } {
  // Every directory the archive needs: those it names, those its entries lie in, and `root` itself.
  const directories = new Set<string>(root === '' ? [] : [root]);
  for (const [path, entry] of entries) {
    if (entry.type === 'dir') directories.add(path);
    for (let parent = parentPath(path); isBelow(parent, root) && !directories.has(parent); parent = parentPath(parent))
      directories.add(parent);
  }
  // What is there now below `root`, read in one query rather than a lookup per path.
  const below = workspace.entriesBelow(root);
  const existing = new Map(below.map((entry) => [entry.path, entry]));
  const there = (path: string) => (path === root ? workspace.entry(root) : existing.get(path));
  const deletions = new Set<string>();
  // Directories that an entry of another type replaces, with everything in them.
  const replaced = new Set<string>();
  for (const path of directories) {
    const type = there(path)?.type;
    if (type !== undefined && type !== 'dir') deletions.add(path);
  }
  for (const [path, entry] of entries) {
    if (entry.type === 'dir' || there(path)?.type !== 'dir') continue;
    replaced.add(path);
    deletions.add(path);
  }
  if (mode === 'replace' || replaced.size > 0) {
    for (const { path } of below) {
      if (mode === 'replace' ? !entries.has(path) && !directories.has(path) : within(path, replaced))
        deletions.add(path);
    }
  }

  // Children sort after their parent, so the reverse order deletes what a directory holds first.
  const changes: ManifestChange[] = [...deletions]
    .sort()
    .reverse()
    .map((path) => ({ op: 'delete', path }));
  const now = (path: string) => (deletions.has(path) ? undefined : there(path));
  for (const path of [...directories].sort()) if (now(path)?.type !== 'dir') changes.push({ op: 'mkdir', path });
  for (const [path, entry] of entries) {
    const current = now(path);
    if (entry.type === 'file' && !(current?.type === 'file' && current.blob === entry.blob))
      changes.push({ op: 'write', path, blob: entry.blob, size: entry.size });
    if (entry.type === 'symlink' && !(current?.type === 'symlink' && current.target === entry.target))
      changes.push({ op: 'symlink', path, target: entry.target });
  }
  return { changes, deleted: deletions.size };
}

/** Whether a directory of `directories` holds `path`. */
function within(path: string, directories: ReadonlySet<string>): boolean {
  for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent))
    if (directories.has(parent)) return true;
  return false;
}

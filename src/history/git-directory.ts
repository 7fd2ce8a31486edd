// One workspace's bare git directory over the store: the injected fs, its branch, and how the branch moves.
import type { FsClient } from 'isomorphic-git';
import { MemoryObjectStore } from '../storage/memory-object-store.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { ObjectFiles, SqlFiles } from './git-files.ts';
import { GITDIR, StoreFs } from './store-fs.ts';

/** The branch checkpoints are committed on; HEAD names it, so a copy of the directory is an ordinary bare repository. */
export const BRANCH_REF = 'refs/heads/main';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What isomorphic-git's commands are given to read and write objects. */
export interface GitObjects {
  fs: FsClient;
  /** The same fs, typed: for copying files in and out. */
  store: StoreFs;
  gitdir: string;
  /** isomorphic-git's cache of pack indexes, for the commands of one operation. */
  cache: object;
}

/** A workspace's git directory: its objects and its small files (HEAD, config, the branch). */
export interface GitDirectory extends GitObjects {
  files: SqlFiles;
}

/**
 * Objects live beside the workspace's blobs under `ws/<store>/git/`, so deleting the store's
 * object prefix deletes them too, and forks sharing the store share them (git objects are
 * addressed by hash, like blobs); HEAD, config and refs are rows in SQL, the workspace's own.
 */
export function openGitDirectory(
  db: SqlDatabase,
  objects: ObjectStore,
  workspace: { uid: string; store: string },
): GitDirectory {
  const files = new SqlFiles(db, workspace.uid);
  const store = new StoreFs(new ObjectFiles(objects, gitObjectPrefix(workspace.store)), files);
  return { fs: { promises: store }, store, gitdir: GITDIR, cache: {}, files };
}

/** A git directory wholly in memory, gone with the operation that made it. */
export function memoryGitObjects(): GitObjects {
  const memory = new ObjectFiles(new MemoryObjectStore(), '');
  const store = new StoreFs(memory, memory);
  return { fs: { promises: store }, store, gitdir: GITDIR, cache: {} };
}

export function gitObjectPrefix(store: string): string {
  return `ws/${store}/git/`;
}

/** The commit the branch points at, if any checkpoint was made. */
export function branchHead(files: SqlFiles): string | undefined {
  const bytes = files.readNow(BRANCH_REF);
  return bytes === undefined ? undefined : decoder.decode(bytes).trim();
}

/**
 * Points the branch at `next` when it still points at `expected` (git's lock-and-compare, as a
 * row update); call it inside the SQL transaction that records the checkpoint.
 */
export function moveBranch(files: SqlFiles, expected: string | undefined, next: string): boolean {
  if (branchHead(files) !== expected) return false;
  if (files.readNow('HEAD') === undefined) {
    files.writeNow('HEAD', encoder.encode(`ref: ${BRANCH_REF}\n`));
    files.writeNow(
      'config',
      encoder.encode('[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n'),
    );
  }
  files.writeNow(BRANCH_REF, encoder.encode(`${next}\n`));
  return true;
}

// Import: fetches a git remote into memory, checks it against the limits, then fills an empty workspace in one commit.
import { fetch as fetchRemote, readBlob } from 'isomorphic-git';
import type { z } from 'zod';
import type { importResultSchema } from '../contract/http-answers.ts';
import type { EgressFetch } from '../core/egress-fetch.ts';
import { ToolError } from '../core/errors.ts';
import { parentPath } from '../core/virtual-path.ts';
import type { FileChange, Workspace } from '../workspace/workspace.ts';
import { concurrently } from '../core/concurrently.ts';
import { memoryGitObjects, type GitObjects } from './git-directory.ts';
import type { HistoryRecords } from './history-records.ts';
import { boundedHttp, parseRemoteUrl, remoteError } from './remote-http.ts';
import { SYMLINK_MODE } from './snapshot-tree.ts';
import { GITDIR } from './store-fs.ts';
import { commitTree, listTree, type TreeItem } from './tree-listing.ts';

export interface GitSource {
  url: string;
  ref?: string;
  /** Commits of history to fetch; 1 (the default) fetches the tip only. */
  depth?: number;
}

export interface ImportLimits {
  /** Files and symlinks one import may create (TOOLGATE_IMPORT_MAX_FILES). */
  maxFiles: number;
  /** Bytes of file content one import may create, and of the pack it may download (TOOLGATE_IMPORT_MAX_BYTES). */
  maxBytes: number;
  /** The largest single file (TOOLGATE_MAX_FILE_BYTES, as for every write). */
  maxFileBytes: number;
  /** How long the remote may take to send the repository (TOOLGATE_IMPORT_TIMEOUT_MS). */
  timeoutMs: number;
}

/** The remote (without credentials), the commit imported, what it created and what it left out. */
export type ImportResult = z.output<typeof importResultSchema>;

const PARALLEL = 8;
/** A pack is compressed, but its framing and an incompressible file may make it slightly larger than the content. */
const PACK_SLACK_BYTES = 1024 * 1024;

/** Fetches through `egress`, so every host the import connects to, redirects included, passed the egress rule. */
export async function importRepository(
  target: GitObjects,
  records: HistoryRecords,
  workspace: Workspace,
  source: GitSource,
  limits: ImportLimits,
  egress: EgressFetch,
): Promise<ImportResult> {
  const remote = parseRemoteUrl(source.url);
  assertEmpty(workspace);
  // The fetch lands in memory: nothing reaches the store until the repository fits the limits.
  const scratch = memoryGitObjects();
  // fetch stores the remote's refs under refs/remotes by the refspec of the config it reads.
  await scratch.store.writeFile(
    `${GITDIR}/config`,
    '[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
  );
  const requested = source.ref ?? 'HEAD';
  let fetched: Awaited<ReturnType<typeof fetchRemote>>;
  try {
    fetched = await fetchRemote({
      fs: scratch.fs,
      http: boundedHttp(
        egress,
        limits.maxBytes + PACK_SLACK_BYTES,
        'TOOLGATE_IMPORT_MAX_BYTES',
        AbortSignal.timeout(limits.timeoutMs),
      ),
      gitdir: scratch.gitdir,
      cache: scratch.cache,
      url: remote.fetch,
      ref: requested,
      singleBranch: true,
      tags: false,
      depth: source.depth ?? 1,
    });
  } catch (error) {
    throw remoteError(error, remote, requested, limits.timeoutMs);
  }
  if (!fetched.fetchHead)
    throw new ToolError('invalid_argument', `The git repository at ${remote.shown} has no commits to import.`, {
      url: remote.shown,
    });
  const ref = source.ref ?? fetched.defaultBranch?.replace(/^refs\/heads\//, '') ?? 'HEAD';
  const commit = fetched.fetchHead;

  let count = 0;
  const items = await listTree(scratch, await commitTree(scratch, commit), (item) => {
    if (item.mode !== '160000' && (count += 1) > limits.maxFiles)
      throw tooLarge(`more than ${limits.maxFiles} files`, 'TOOLGATE_IMPORT_MAX_FILES', limits.maxFiles);
  });
  const { accepted, skipped } = await admit(workspace, items);
  const bytes = await measure(scratch, accepted, limits);

  // It fits: keep the pack beside the history (checkpoints refer to its blobs), store the contents, commit.
  for (const name of await scratch.store.readdir(`${GITDIR}/objects/pack`)) {
    await target.store.writeFile(
      `${GITDIR}/objects/pack/${name}`,
      (await scratch.store.readFile(`${GITDIR}/objects/pack/${name}`)) as Uint8Array,
    );
  }
  const changes: FileChange[] = [];
  await concurrently(accepted, PARALLEL, async (item) => {
    const { blob } = await readBlob({ fs: scratch.fs, gitdir: scratch.gitdir, oid: item.oid, cache: scratch.cache });
    if (item.mode === SYMLINK_MODE) {
      changes.push({
        op: 'symlink',
        path: item.path,
        target: new TextDecoder().decode(blob),
        expect: { absent: true },
      });
      return;
    }
    const sha256 = await workspace.storeBlob(blob);
    records.recordBlob(workspace.uid, sha256, item.oid, blob.byteLength);
    changes.push({ op: 'write', path: item.path, blob: sha256, size: blob.byteLength, expect: { absent: true } });
  });
  const version =
    changes.length === 0 ? null : (await workspace.commit(changes, () => assertOnly(workspace, changes))).version;
  const symlinks = accepted.filter((item) => item.mode === SYMLINK_MODE).length;
  return { url: remote.shown, ref, commit, files: accepted.length - symlinks, symlinks, bytes, version, skipped };
}

function assertEmpty(workspace: Workspace): void {
  if (workspace.manifestEntries().length > 0) {
    throw new ToolError(
      'conflict',
      `Workspace ${workspace.id} is not empty; import fills an empty workspace only (delete and create it again first).`,
      { workspace: workspace.id },
    );
  }
}

/** Inside the import's commit: nothing but what it creates may be there, or another write got in first. */
function assertOnly(workspace: Workspace, changes: readonly FileChange[]): void {
  const created = new Set<string>();
  for (const change of changes) {
    for (let path = change.path; path !== '' && !created.has(path); path = parentPath(path)) created.add(path);
  }
  if (workspace.manifestEntries().some((entry) => !created.has(entry.path))) {
    throw new ToolError(
      'conflict',
      `Workspace ${workspace.id} was written to while the import ran; it is no longer empty, so nothing was imported.`,
      { workspace: workspace.id },
    );
  }
}

/** The path guard decides, as for any write: refused paths and submodules are left out and reported. */
async function admit(
  workspace: Workspace,
  items: readonly TreeItem[],
): Promise<{ accepted: TreeItem[]; skipped: ImportResult['skipped'] }> {
  const accepted: TreeItem[] = [];
  const skipped: ImportResult['skipped'] = [];
  for (const item of items) {
    if (item.mode === '160000') {
      skipped.push({ path: item.path, reason: 'a submodule: its repository is not imported' });
      continue;
    }
    try {
      await workspace.resolve(item.path, 'write', { followFinalSymlink: false });
      accepted.push(item);
    } catch (error) {
      skipped.push({ path: item.path, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { accepted, skipped };
}

/** The total bytes of the files, checked against the limits before anything is stored. */
async function measure(scratch: GitObjects, items: readonly TreeItem[], limits: ImportLimits): Promise<number> {
  let total = 0;
  for (const item of items) {
    const { blob } = await readBlob({ fs: scratch.fs, gitdir: scratch.gitdir, oid: item.oid, cache: scratch.cache });
    if (item.mode === SYMLINK_MODE) continue;
    if (blob.byteLength > limits.maxFileBytes) {
      throw tooLarge(
        `${item.path}, ${blob.byteLength} bytes, over the file limit`,
        'TOOLGATE_MAX_FILE_BYTES',
        limits.maxFileBytes,
      );
    }
    total += blob.byteLength;
    if (total > limits.maxBytes)
      throw tooLarge(`more than ${limits.maxBytes} bytes of files`, 'TOOLGATE_IMPORT_MAX_BYTES', limits.maxBytes);
  }
  return total;
}

function tooLarge(what: string, limit: string, value: number): ToolError {
  return new ToolError(
    'payload_too_large',
    `The repository holds ${what} (${limit} = ${value}); nothing was imported. Import a smaller repository or ref, or raise the limit.`,
    {
      limit,
      value,
    },
  );
}

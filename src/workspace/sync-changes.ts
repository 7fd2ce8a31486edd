// Commits what a command changed on a runner: one conditional commit; API-side changes win as conflicts.
import { isToolError } from '../core/errors.ts';
import type { RunnerChange, SyncResult, UploadedWrite } from '../contract/runner-protocol.ts';
import type { FileChange, Workspace } from './workspace.ts';

/** What a sync-back names: a runner's changes, a write's content inline or uploaded. */
export type SyncedChange = RunnerChange | UploadedWrite;

const MAX_ATTEMPTS = 5;

export interface SyncOptions {
  /** A file larger than this is not kept: it is a conflict, as a file the API changed meanwhile is. */
  maxFileBytes?: number;
  /**
   * Runs inside the commit's transaction with the result (or, when nothing needs committing, once
   * the result is known), so a caller can record it exactly when it lands.
   */
  onCommit?: (result: SyncResult) => void;
}

export async function syncChanges(
  workspace: Workspace,
  changes: readonly SyncedChange[],
  options: SyncOptions = {},
): Promise<SyncResult> {
  const { maxFileBytes = Infinity, onCommit } = options;
  const skipped: SyncResult['skipped'] = [];
  const tooLarge: string[] = [];
  const allowed: SyncedChange[] = [];
  const stored = await blobSizes(workspace, changes);
  for (const change of changes) {
    if (change.op === 'write' && ('content' in change ? change.content.byteLength : change.size) > maxFileBytes) {
      tooLarge.push(change.path);
      continue;
    }
    try {
      // An uploaded write names content the store must hold, at the size it claims.
      if (change.op === 'write' && 'blob' in change && stored.get(change.blob) !== change.size) {
        throw new Error(`its content (blob ${change.blob}, ${change.size} bytes) was not uploaded`);
      }
      const resolved = await workspace.resolve(change.path, 'write', { followFinalSymlink: false });
      if (resolved.path !== change.path)
        throw new Error(`${change.path} resolves to ${resolved.path} through a symlink`);
      allowed.push(change);
    } catch (error) {
      skipped.push({ path: change.path, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  for (let attempt = 1; ; attempt += 1) {
    const conflicts: string[] = [...tooLarge];
    const fileChanges: FileChange[] = [];
    const deleting = new Set(allowed.filter((change) => change.op === 'delete').map((change) => change.path));
    for (const change of allowed) {
      const current = workspace.entry(change.path);
      if (change.op === 'mkdir') {
        if (current?.type === 'dir') continue;
        if (current) conflicts.push(change.path);
        else fileChanges.push(change);
        continue;
      }
      const unchanged = change.baseVersion === null ? current === undefined : current?.version === change.baseVersion;
      if (!unchanged) {
        // Deleting what is already gone is no conflict; anything else changed through the API wins.
        if (!(change.op === 'delete' && current === undefined)) conflicts.push(change.path);
        continue;
      }
      if (
        change.op === 'delete' &&
        current?.type === 'dir' &&
        workspace.entriesIn(change.path).some((child) => !deleting.has(child.path))
      ) {
        conflicts.push(change.path);
        continue;
      }
      const expect = change.baseVersion === null ? { absent: true as const } : { version: change.baseVersion };
      if (change.op === 'write')
        fileChanges.push(
          'content' in change
            ? { op: 'write', path: change.path, content: change.content, expect }
            : { op: 'write', path: change.path, blob: change.blob, size: change.size, expect },
        );
      else if (change.op === 'symlink')
        fileChanges.push({ op: 'symlink', path: change.path, target: change.target, expect });
      else fileChanges.push({ op: 'delete', path: change.path, expect: { version: change.baseVersion } });
    }
    if (fileChanges.length === 0) {
      const result: SyncResult = { committed: [], conflicts, skipped, version: null };
      onCommit?.(result);
      return result;
    }
    try {
      const committed = fileChanges.map((change) => change.path);
      const commit = await workspace.commit(fileChanges, (version) =>
        onCommit?.({ committed, conflicts, skipped, version }),
      );
      return { committed, conflicts, skipped, version: commit.version };
    } catch (error) {
      // An API write landed between our check and our commit: check again against what is there now.
      const raced =
        isToolError(error) &&
        (error.code === 'conflict' || error.code === 'already_exists' || error.code === 'not_found');
      if (!raced || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** The stored size of each blob the uploaded writes name, looked up side by side (a store may take a round trip each). */
async function blobSizes(
  workspace: Workspace,
  changes: readonly SyncedChange[],
): Promise<Map<string, number | undefined>> {
  const blobs = [
    ...new Set(changes.flatMap((change) => (change.op === 'write' && 'blob' in change ? [change.blob] : []))),
  ];
  const sizes = new Map<string, number | undefined>();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(16, blobs.length) }, async () => {
      while (next < blobs.length) {
        const blob = blobs[next++]!;
        sizes.set(blob, await workspace.blobSize(blob));
      }
    }),
  );
  return sizes;
}

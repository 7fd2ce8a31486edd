// Commits what a command changed on a runner: one conditional commit; API-side changes win as conflicts.
import { isToolError } from '../core/errors.ts';
import type { FileChange, Workspace } from './workspace.ts';

export type RunnerChange =
  | { op: 'write'; path: string; content: Uint8Array; baseVersion: number | null }
  | { op: 'symlink'; path: string; target: string; baseVersion: number | null }
  | { op: 'mkdir'; path: string }
  | { op: 'delete'; path: string; baseVersion: number };

export interface SyncResult {
  /** Paths committed, with the entry each now has (deleted ones are absent). */
  committed: string[];
  /** Paths changed through the API since the command started: the API's version is kept. */
  conflicts: string[];
  /** Paths the command may not write (denylist, excluded, read-only root, outside), with why. */
  skipped: { path: string; reason: string }[];
  version: number | null;
}

const MAX_ATTEMPTS = 5;

/**
 * `onCommit` runs inside the commit's transaction with the result (or, when nothing needs
 * committing, once the result is known), so a caller can record it exactly when it lands.
 */
export async function syncChanges(workspace: Workspace, changes: readonly RunnerChange[], onCommit?: (result: SyncResult) => void): Promise<SyncResult> {
  const skipped: SyncResult['skipped'] = [];
  const allowed: RunnerChange[] = [];
  for (const change of changes) {
    try {
      const resolved = await workspace.resolve(change.path, 'write', { followFinalSymlink: false });
      if (resolved.path !== change.path) throw new Error(`${change.path} resolves to ${resolved.path} through a symlink`);
      allowed.push(change);
    } catch (error) {
      skipped.push({ path: change.path, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  for (let attempt = 1; ; attempt += 1) {
    const conflicts: string[] = [];
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
      if (change.op === 'delete' && current?.type === 'dir' && workspace.list(change.path, false).some((child) => !deleting.has(child.path))) {
        conflicts.push(change.path);
        continue;
      }
      const expect = change.baseVersion === null ? { absent: true as const } : { version: change.baseVersion };
      if (change.op === 'write') fileChanges.push({ op: 'write', path: change.path, content: change.content, expect });
      else if (change.op === 'symlink') fileChanges.push({ op: 'symlink', path: change.path, target: change.target, expect });
      else fileChanges.push({ op: 'delete', path: change.path, expect: { version: change.baseVersion } });
    }
    if (fileChanges.length === 0) {
      const result: SyncResult = { committed: [], conflicts, skipped, version: null };
      onCommit?.(result);
      return result;
    }
    try {
      const committed = fileChanges.map((change) => change.path);
      const commit = await workspace.commit(fileChanges, (version) => onCommit?.({ committed, conflicts, skipped, version }));
      return { committed, conflicts, skipped, version: commit.version };
    } catch (error) {
      // An API write landed between our check and our commit: check again against what is there now.
      const raced = isToolError(error) && (error.code === 'conflict' || error.code === 'already_exists' || error.code === 'not_found');
      if (!raced || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

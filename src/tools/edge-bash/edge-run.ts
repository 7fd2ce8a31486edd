// The edge engine of bash: a command line run without a runner by just-bash (a bash interpreter in
// TypeScript: no process, no network) over a copy of the workspace (edge-interpreter.ts); what the
// command changed is then synced as a runner's changes are (workspace/sync-changes.ts): one
// conditional commit through the path guard, a file changed meanwhile through the API a conflict.
import type { SyncResult } from '../../contract/runner-protocol.ts';
import { syncChanges } from '../../workspace/sync-changes.ts';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import type { EdgeSource } from './edge-copy.ts';
import { handlerEdgeEngine, type EdgeEngine, type EdgeRun } from './edge-interpreter.ts';

export interface EdgeCommand extends EdgeRun {
  /** A file a command leaves larger than this is not kept (a conflict), as on a runner. */
  maxFileBytes: number;
  /** Runs inside the commit of the command's changes (or once, when it changed nothing): the call's usage record. */
  onCommit?: () => void;
}

export interface EdgeOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The command ran out of time and was stopped; its changes are still synced, as a runner's are. */
  timedOut: boolean;
  /** stdout or stderr was longer than an answer keeps. */
  truncated: boolean;
  sync: SyncResult;
}

/** A workspace as the interpreter reads it: its entries now, and each file's bytes on first read. */
export function edgeSource(workspace: Workspace): EdgeSource {
  let entries: readonly ManifestEntry[] | undefined;
  return {
    // Listed when first asked for: an edge thread that kept this state's listing never asks.
    get entries() {
      return (entries ??= workspace.manifestEntries());
    },
    read: (path, entry) => workspace.readBytes(path, entry),
    scope: workspace.store,
    listing: workspace.stamp,
  };
}

/**
 * Runs `run` on the edge (in the handler unless a home gives its own engine) and syncs what it
 * changed. With `orRunner`, a command auto's allow-list does not hold (with `requested: 'auto'`),
 * or one the interpreter stopped at one of its own limits (126: too many commands, loop iterations,
 * ...), answers undefined and keeps nothing, so the caller runs it on a runner.
 */
export async function runOnEdge(
  workspace: Workspace,
  run: EdgeCommand & { orRunner: boolean },
  engine?: EdgeEngine,
): Promise<EdgeOutcome | undefined>;
export async function runOnEdge(workspace: Workspace, run: EdgeCommand, engine?: EdgeEngine): Promise<EdgeOutcome>;
export async function runOnEdge(
  workspace: Workspace,
  run: EdgeCommand,
  engine: EdgeEngine = handlerEdgeEngine,
): Promise<EdgeOutcome | undefined> {
  const { maxFileBytes, onCommit, ...interpreted } = run;
  const { orRunner } = run;
  const outcome = await engine.interpret(edgeSource(workspace), interpreted);
  if (orRunner && outcome.forRunner) return undefined;
  const synced = await syncChanges(workspace, outcome.changes, { maxFileBytes, onCommit });
  return {
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    exitCode: outcome.exitCode,
    timedOut: outcome.timedOut,
    truncated: outcome.truncated,
    sync: { ...synced, skipped: [...outcome.skipped, ...synced.skipped] },
  };
}

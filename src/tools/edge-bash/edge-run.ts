// The edge engine of bash: a command line run in the request handler by just-bash (a bash
// interpreter in TypeScript: no process, no network) over the workspace's copy (edge-copy.ts); what
// the command changed is then synced as a runner's changes are (workspace/sync-changes.ts): one
// conditional commit through the path guard, a file changed meanwhile through the API a conflict.
// The interpreter is loaded on first use, so a server that never runs it never pays for it.
import type { SyncResult } from '../../contract/runner-protocol.ts';
import { syncChanges } from '../../workspace/sync-changes.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import { EDGE_WORKSPACE, EdgeCopy } from './edge-copy.ts';

export interface EdgeCommand {
  command: string;
  /** The working directory: a resolved virtual path, `''` for the root. */
  cwd: string;
  /** The caller's variables, over the environment a runner gives a command. */
  env: Record<string, string>;
  timeoutMs: number;
  /** A file a command leaves larger than this is not kept (a conflict), as on a runner. */
  maxFileBytes: number;
}

export interface EdgeOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The command ran out of time and was stopped; its changes are still synced, as a runner's are. */
  timedOut: boolean;
  sync: SyncResult;
}

/** The environment a runner gives a command (runner/node/command-environment.ts), so scripts see the same. */
const BASE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb' };

let interpreter: Promise<typeof import('just-bash')> | undefined;
const loadInterpreter = () => (interpreter ??= import('just-bash'));

export async function runOnEdge(workspace: Workspace, run: EdgeCommand): Promise<EdgeOutcome> {
  const { Bash, InMemoryFs } = await loadInterpreter();
  const copy = await EdgeCopy.of(workspace, new InMemoryFs());
  const cwd = run.cwd === '' ? EDGE_WORKSPACE : `${EDGE_WORKSPACE}/${run.cwd}`;
  const bash = new Bash({
    fs: copy.fs,
    cwd,
    env: { ...BASE_ENV, PWD: cwd, ...run.env },
    executionLimits: { maxExecutionTimeMs: run.timeoutMs },
  });
  const timeout = AbortSignal.timeout(run.timeoutMs);
  const result = await bash.exec(run.command, { signal: timeout, rawScript: true });
  const { changes, skipped } = await copy.changes();
  const synced = await syncChanges(workspace, changes, { maxFileBytes: run.maxFileBytes });
  const sync = { ...synced, skipped: [...skipped, ...synced.skipped] };
  return {
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exitCode,
    timedOut: timeout.aborted,
    sync,
  };
}

// The edge engine of bash: a command line run in the request handler by just-bash (a bash
// interpreter in TypeScript: no process, no network) over the workspace's copy (edge-copy.ts); what
// the command changed is then synced as a runner's changes are (workspace/sync-changes.ts): one
// conditional commit through the path guard, a file changed meanwhile through the API a conflict.
// The interpreter is loaded on first use, so a server that never runs it never pays for it.
import type { SyncResult } from '../../contract/runner-protocol.ts';
import { MAX_EXEC_STREAM_CHARS } from '../../contract/tool-answers.ts';
import type { BashEngine } from '../../contract/tool-inputs.ts';
import { ToolError } from '../../core/errors.ts';
import { cutAtChars } from '../../core/text-lines.ts';
import { syncChanges } from '../../workspace/sync-changes.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import { EDGE_WORKSPACE, EdgeCopy } from './edge-copy.ts';
import { autoObjection, edgeObjection } from './edge-script.ts';

export interface EdgeCommand {
  command: string;
  /** The working directory: a resolved virtual path, `''` for the root. */
  cwd: string;
  /** The caller's variables, over the environment a runner gives a command. */
  env: Record<string, string>;
  timeoutMs: number;
  /** A file a command leaves larger than this is not kept (a conflict), as on a runner. */
  maxFileBytes: number;
  /** The most the command's copy may hold in memory (its files and what it writes), in bytes. */
  maxWorkspaceBytes?: number;
  /** Runs inside the commit of the command's changes (or once, when it changed nothing): the call's usage record. */
  onCommit?: () => void;
  /** Give the command back (undefined) when the interpreter stops it at one of its own limits, keeping nothing. */
  orRunner?: boolean;
}

export interface EdgeOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The command ran out of time and was stopped; its changes are still synced, as a runner's are. */
  timedOut: boolean;
  /** stdout or stderr was longer than an answer keeps (MAX_EXEC_STREAM_CHARS each). */
  truncated: boolean;
  sync: SyncResult;
}

/** The environment a runner gives a command (runner/node/command-environment.ts), so scripts see the same. */
const BASE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb' };

/** The exit code of a command stopped at its timeout, as a runner reports one killed by SIGKILL. */
const TIMED_OUT_EXIT_CODE = 137;
/** What the interpreter answers when it stops a command at one of its own limits (as bash answers a command it cannot execute). */
const INTERPRETER_LIMIT_EXIT_CODE = 126;
/** Output the interpreter may produce before it stops the command: room beyond what the answer keeps, so cutting is ours. */
const OUTPUT_STOP_FACTOR = 4;

let interpreter: Promise<typeof import('just-bash')> | undefined;
const loadInterpreter = () => (interpreter ??= import('just-bash'));

/**
 * Where an exec runs: `runner` as asked; `edge` as asked, unless the edge cannot run the command at
 * all (400 naming it); `auto` on the edge only when every command, option and shell feature in it
 * is on the allow-list the differential test proves.
 */
export async function engineFor(command: string, requested: BashEngine): Promise<'edge' | 'runner'> {
  if (requested === 'runner') return 'runner';
  const { parse, getCommandNames } = await loadInterpreter();
  let script: ReturnType<typeof parse> | undefined;
  try {
    script = parse(command);
  } catch {
    // Bash itself reports the syntax error: a runner's message is the one scripts expect.
    if (requested === 'auto') return 'runner';
  }
  if (requested === 'auto') return script && !autoObjection(script) ? 'edge' : 'runner';
  const objection = script && edgeObjection(script, new Set(getCommandNames()));
  if (objection)
    throw new ToolError(
      'invalid_argument',
      `engine "edge" cannot run this command: ${objection.reason} (${objection.subject}); run it with engine "runner" or "auto".`,
      { command: objection.subject },
    );
  return 'edge';
}

/**
 * Runs `run` on the edge and syncs what it changed. With `orRunner`, a command the interpreter
 * stopped at one of its own limits (126: too many commands, loop iterations, ...) answers
 * undefined and keeps nothing, so the caller runs it on a runner, where those limits do not exist.
 */
export async function runOnEdge(
  workspace: Workspace,
  run: EdgeCommand & { orRunner: boolean },
): Promise<EdgeOutcome | undefined>;
export async function runOnEdge(workspace: Workspace, run: EdgeCommand): Promise<EdgeOutcome>;
export async function runOnEdge(workspace: Workspace, run: EdgeCommand): Promise<EdgeOutcome | undefined> {
  const { Bash, InMemoryFs } = await loadInterpreter();
  const copy = await EdgeCopy.of(workspace, new InMemoryFs(undefined, { maxTotalBytes: run.maxWorkspaceBytes }));
  const cwd = run.cwd === '' ? EDGE_WORKSPACE : `${EDGE_WORKSPACE}/${run.cwd}`;
  const bash = new Bash({
    fs: copy.fs,
    cwd,
    env: { ...BASE_ENV, PWD: cwd, ...run.env },
    executionLimits: {
      maxExecutionTimeMs: run.timeoutMs,
      maxOutputSize: MAX_EXEC_STREAM_CHARS * OUTPUT_STOP_FACTOR,
    },
  });
  const timeout = AbortSignal.timeout(run.timeoutMs);
  const result = await bash.exec(run.command, { signal: timeout, rawScript: true });
  if (run.orRunner && result.exitCode === INTERPRETER_LIMIT_EXIT_CODE && !timeout.aborted) return undefined;
  const { changes, skipped } = await copy.changes();
  const synced = await syncChanges(workspace, changes, { maxFileBytes: run.maxFileBytes, onCommit: run.onCommit });
  const sync = { ...synced, skipped: [...skipped, ...synced.skipped] };
  const stdout = cutAtChars(result.stdout, MAX_EXEC_STREAM_CHARS);
  const stderr = cutAtChars(result.stderr, MAX_EXEC_STREAM_CHARS);
  return {
    stdout,
    stderr,
    truncated: stdout.length < result.stdout.length || stderr.length < result.stderr.length,
    exitCode: timeout.aborted ? TIMED_OUT_EXIT_CODE : result.exitCode,
    timedOut: timeout.aborted,
    sync,
  };
}

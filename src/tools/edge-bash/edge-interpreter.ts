// The edge engine's interpreter side: where a command line may run (engineFor) and running it with
// just-bash over a copy of the workspace (interpret), with nothing of the server but the copy's
// source. It runs in the request handler (the Cloudflare home) or on a worker thread (the Node
// home, node/edge-threads.ts), so the event loop every tenant shares never runs a script.
import type { ScriptNode } from 'just-bash';
import type { RunnerChange } from '../../contract/runner-protocol.ts';
import { MAX_EXEC_STREAM_CHARS } from '../../contract/tool-answers.ts';
import type { BashEngine } from '../../contract/tool-inputs.ts';
import { ToolError } from '../../core/errors.ts';
import { cutAtChars } from '../../core/text-lines.ts';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import { EDGE_WORKSPACE, EdgeCopy, type EdgeSource } from './edge-copy.ts';
import { MissingDirectoryError, type EdgeFs } from './edge-fs.ts';
import { edgeGrep, loneGrep } from './edge-grep.ts';
import { interpreterLayout } from './edge-layout.ts';
import { EdgeSnapshot, type SharedContentBudget } from './edge-snapshot.ts';
import { autoObjection, edgeObjection, loneCommand, type WorkspaceFacts } from './edge-script.ts';

/** A command line for the interpreter, as the bash tool was given it (cwd resolved by the guard). */
export interface EdgeRun {
  command: string;
  /** The working directory: a resolved virtual path, `''` for the root. */
  cwd: string;
  /** The caller's variables, over the environment a runner gives a command. */
  env: Record<string, string>;
  timeoutMs: number;
  /** The most the command's copy may hold in memory (its files and what it writes), in bytes. */
  maxWorkspaceBytes?: number;
  /** Give the command back (forRunner) rather than fail where the edge cannot finish it as bash would. */
  orRunner?: boolean;
  /**
   * The engine the caller asked for, decided here before anything runs (engineFor, in the same
   * step, so a thread is asked once): `auto` gives back (forRunner) a command off its allow-list,
   * `edge` refuses one the edge cannot run. Absent: the command runs.
   */
  requested?: 'auto' | 'edge';
  /** What the decision on auto may know of the workspace. */
  workspace?: WorkspaceFacts;
}

/** What the interpreter made of a command: its output and what it changed in its copy. */
export interface EdgeInterpretation {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The command ran out of time and was stopped. */
  timedOut: boolean;
  /** stdout or stderr was longer than an answer keeps (MAX_EXEC_STREAM_CHARS each). */
  truncated: boolean;
  /**
   * A runner should run the command: auto's allow-list does not hold it, or the interpreter stopped
   * it at one of its own limits (commands, loop iterations, ...), which bash does not have, or
   * could not go on as bash does (a redirection into a missing directory).
   */
  forRunner: boolean;
  /** What the command changed, as a runner's copy reports it. */
  changes: RunnerChange[];
  /** What the copy held that no disk could, with why. */
  skipped: { path: string; reason: string }[];
}

/** Where the edge engine's commands are read and run: in the handler, or on a home's threads. */
export interface EdgeEngine {
  interpret(source: EdgeSource, run: EdgeRun): Promise<EdgeInterpretation>;
}

/** The environment a runner gives a command (runner/node/command-environment.ts), so scripts see the same. */
const BASE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb' };
/** The exit code of a command stopped at its timeout, as a runner reports one killed by SIGKILL. */
const TIMED_OUT_EXIT_CODE = 137;
/** What the interpreter answers when it stops a command at one of its own limits (as bash answers a command it cannot execute). */
const INTERPRETER_LIMIT_EXIT_CODE = 126;
/** How long past the timeout the interpreter's own clock stops a command the abort did not reach. */
const EXECUTION_TIME_BACKSTOP_MS = 1_000;
/** Output the interpreter may produce before it stops the command: room beyond what the answer keeps, so cutting is ours. */
const OUTPUT_STOP_FACTOR = 4;
/**
 * The interpreter's limits the edge's own grep meets too (just-bash's defaults, spelled out so that
 * a grep the fast path answers without the interpreter meets the same ones as inside it).
 */
const WORK_LIMITS = { maxGlobOperations: 1_000_000, maxArrayElements: 1_000_000, maxLoopIterations: 100_000 };

/** An interpretation that ran nothing and changed nothing. */
const NOTHING: EdgeInterpretation = {
  stdout: '',
  stderr: '',
  exitCode: 0,
  timedOut: false,
  truncated: false,
  forRunner: false,
  changes: [],
  skipped: [],
};

/** A path the interpreter named, as the workspace names it (relative to its root) when it lies inside. */
function relativeToWorkspace(path: string, cwd: string): string {
  const absolute = path.startsWith('/') ? path : `${cwd}/${path}`;
  return absolute.startsWith(`${EDGE_WORKSPACE}/`) ? absolute.slice(EDGE_WORKSPACE.length + 1) : path;
}

/** The interpreter's commands that run another language, which the edge leaves to a runner. */
const OTHER_LANGUAGES = ['python', 'python3', 'js-exec', 'node'];

let interpreter: Promise<typeof import('just-bash')> | undefined;
/** An interpreter kept to read command lines with; it runs none. */
let parser: import('just-bash').Bash | undefined;
/** The commands engine "edge" runs (the interpreter's, but those of the network and of other languages): the same for every command. */
let edgeCommands: ReadonlySet<string> | undefined;
/**
 * The last command line read and its syntax tree (or the failure to read it): an edge thread
 * decides the engine and then runs the same line, which is read once. Nothing changes a tree once
 * read (the interpreter reads the line again to run it).
 */
let lastRead: { command: string; script: ScriptNode | undefined } | undefined;
/** The interpreter's own files (/bin, /dev, /proc), made once and shared by every command's filesystem, which copies what it changes. */
let layout: EdgeFs | undefined;
const loadInterpreter = () => (interpreter ??= import('just-bash'));

/**
 * Keeps just-bash's defence in depth (its patches of the globals a script could escape through)
 * applied from now on, for a thread that runs nothing but the edge engine (node/edge-thread.ts).
 * Each command still runs in its own protected context, as before; what this saves is applying and
 * restoring every patch around each command (about 8 ms of CPU for an `echo hi`): the patches stay
 * as they are while two commands overlap. Code outside a command is trusted by the patches and
 * unaffected. Where just-bash has no defence in depth (its browser build, which workerd loads),
 * the handle does nothing.
 */
export async function holdDefenceInDepth(): Promise<void> {
  const { DefenseInDepthBox } = await loadInterpreter();
  // The configuration every Bash asks for by default (defenseInDepth: true): one instance for all.
  DefenseInDepthBox.getInstance(true).activate();
}

/** The edge engine in the calling thread: the Cloudflare home's, whose object serves one workspace. */
export const handlerEdgeEngine: EdgeEngine = { interpret };

/**
 * Where an exec runs: `runner` as asked; `edge` as asked, unless the edge cannot run the command
 * at all (invalid_argument naming it); `auto` on the edge only when every command, option and
 * shell feature in it is on the allow-list the differential test proves.
 */
export async function engineFor(
  command: string,
  requested: BashEngine,
  workspace?: WorkspaceFacts,
): Promise<'edge' | 'runner'> {
  if (requested === 'runner') return 'runner';
  const { getCommandNames, getNetworkCommandNames } = await loadInterpreter();
  // On a syntax error bash itself reports it: on auto, a runner's message is the one scripts expect.
  const script = await scriptOf(command);
  if (requested === 'auto') return script && !autoObjection(script, workspace) ? 'edge' : 'runner';
  if (edgeCommands === undefined) {
    // The edge has no network, and runs no other language: those commands are a runner's.
    const foreign = new Set<string>([...getNetworkCommandNames(), ...OTHER_LANGUAGES]);
    edgeCommands = new Set(getCommandNames().filter((name) => !foreign.has(name)));
  }
  const objection = script && edgeObjection(script, edgeCommands);
  if (objection)
    throw new ToolError(
      'invalid_argument',
      `engine "edge" cannot run this command: ${objection.reason} (${objection.subject}); run it with engine "runner" or "auto".`,
      { command: objection.subject },
    );
  return 'edge';
}

/** A command line's syntax tree as the interpreter reads it, or undefined when it cannot be read. */
async function scriptOf(command: string): Promise<ScriptNode | undefined> {
  if (lastRead?.command === command) return lastRead.script;
  const { Bash } = await loadInterpreter();
  let script: ScriptNode | undefined;
  try {
    // The interpreter's own reading (its `parse` is not in the build workerd loads).
    script = (parser ??= new Bash()).transform(command).ast;
  } catch {
    script = undefined;
  }
  lastRead = { command, script };
  return script;
}

/**
 * A workspace state's tree beside the interpreter's own files, for every command over the state
 * (edge-snapshot.ts): a thread keeps it, its files' contents within `budget`.
 */
export async function snapshotOf(
  entries: readonly ManifestEntry[],
  options: { scope?: string; budget?: SharedContentBudget } = {},
): Promise<EdgeSnapshot> {
  const { Bash } = await loadInterpreter();
  return EdgeSnapshot.of(entries, { ...options, layout: (layout ??= interpreterLayout(Bash)) });
}

/** What the engine answers for a command it gives to a runner without running it. */
export const GIVEN_TO_RUNNER: EdgeInterpretation = { ...NOTHING, forRunner: true };

/** Whether the engine the run asks for (`requested`) gives the command to a runner: decided before anything is listed or run. */
export async function runnerTakes(run: EdgeRun): Promise<boolean> {
  return run.requested !== undefined && (await engineFor(run.command, run.requested, run.workspace)) === 'runner';
}

export async function interpret(source: EdgeSource, run: EdgeRun): Promise<EdgeInterpretation> {
  if (await runnerTakes(run)) return GIVEN_TO_RUNNER;
  const { Bash } = await loadInterpreter();
  layout ??= interpreterLayout(Bash);
  const cwd = run.cwd === '' ? EDGE_WORKSPACE : `${EDGE_WORKSPACE}/${run.cwd}`;
  // A timer of its own, cleared when the command ends, rather than AbortSignal.timeout's, which runs
  // on after it (two minutes by default) for every command a thread has run.
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), run.timeoutMs);
  try {
    return (
      (await interpretAlone(source, run, cwd, stop.signal)) ??
      (await interpretInInterpreter(source, run, cwd, stop.signal, Bash))
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A script that is one `grep` the edge's own grep answers (edge-grep.ts loneGrep), run without the
 * interpreter; undefined for any other, which the interpreter runs (in a copy of its own).
 */
async function interpretAlone(
  source: EdgeSource,
  run: EdgeRun,
  cwd: string,
  signal: AbortSignal,
): Promise<EdgeInterpretation | undefined> {
  const script = await scriptOf(run.command);
  const lone = script && loneCommand(script);
  if (lone?.name !== 'grep') return undefined;
  const copy = await EdgeCopy.of(source, run.maxWorkspaceBytes, layout);
  const context = { cwd, signal, limits: WORK_LIMITS };
  const result = await loneGrep(copy.fs, lone.args, context, MAX_EXEC_STREAM_CHARS);
  if (result === undefined || signal.aborted) return undefined;
  const { changes, skipped } = await copy.changes();
  return {
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exitCode,
    timedOut: false,
    truncated: false,
    forRunner: false,
    changes,
    skipped,
  };
}

async function interpretInInterpreter(
  source: EdgeSource,
  run: EdgeRun,
  cwd: string,
  timeout: AbortSignal,
  Bash: typeof import('just-bash').Bash,
): Promise<EdgeInterpretation> {
  const copy = await EdgeCopy.of(source, run.maxWorkspaceBytes, layout);
  const bash = new Bash({
    fs: copy.fs,
    customCommands: [edgeGrep(copy.fs)],
    cwd,
    env: { ...BASE_ENV, PWD: cwd, ...run.env },
    executionLimits: {
      ...WORK_LIMITS,
      // A backstop: the abort at timeoutMs is what stops a command, so that it reads as a timeout.
      maxExecutionTimeMs: run.timeoutMs + EXECUTION_TIME_BACKSTOP_MS,
      maxOutputSize: MAX_EXEC_STREAM_CHARS * OUTPUT_STOP_FACTOR,
    },
  });
  let result: Awaited<ReturnType<typeof bash.exec>>;
  try {
    result = await bash.exec(run.command, { signal: timeout, rawScript: true });
  } catch (error) {
    // A redirection into a directory that does not exist: bash reports it and goes on with the
    // script, while the interpreter's redirections let the failure end the whole run. Auto gives
    // the command to a runner (nothing kept); engine "edge" refuses it.
    if (!(error instanceof MissingDirectoryError)) throw error;
    if (run.orRunner) return GIVEN_TO_RUNNER;
    throw new ToolError(
      'invalid_argument',
      `engine "edge" cannot run this command: it redirects into ${JSON.stringify(relativeToWorkspace(error.path, cwd))}, ` +
        'whose directory does not exist; nothing was changed. Run it with engine "runner" or "auto".',
      { path: relativeToWorkspace(error.path, cwd) },
    );
  }
  const { changes, skipped } = await copy.changes();
  const stdout = cutAtChars(result.stdout, MAX_EXEC_STREAM_CHARS);
  const stderr = cutAtChars(result.stderr, MAX_EXEC_STREAM_CHARS);
  return {
    stdout,
    stderr,
    truncated: stdout.length < result.stdout.length || stderr.length < result.stderr.length,
    exitCode: timeout.aborted ? TIMED_OUT_EXIT_CODE : result.exitCode,
    timedOut: timeout.aborted,
    forRunner: !timeout.aborted && result.exitCode === INTERPRETER_LIMIT_EXIT_CODE,
    changes,
    skipped,
  };
}

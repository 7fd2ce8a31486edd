// Runs one bash command on this host: inside bubblewrap, or (TOOLGATE_SANDBOX=none, on purpose) unsandboxed in its own process group.
//
// Either way the command's end ends everything it started: bubblewrap tears down the PID
// namespace when its command exits, the process-group mode kills what is left, and a command with
// a cgroup of its own is killed by its cgroup, so no background process keeps running
// unsupervised after the command that started it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chownSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { ToolError } from '../../core/errors.ts';
import { bubblewrapArgs, INSTALL_BUBBLEWRAP, locateBubblewrap } from './bubblewrap.ts';
import { commandEnvironment, cwdSegments, hostBash, requireDirectory } from './command-environment.ts';
import { commandArgv, TERMINAL_LAUNCH_ENV, type CommandOutput } from './command-line.ts';
import type { CommandUser } from './command-user.ts';
import { describeChangeTracking, detectOverlay, overlayLaunch, type OverlayMount } from './overlay.ts';
import {
  findProcessTree,
  readStdioTargets,
  signalProcesses,
  signalProcessGroup,
  type HostProcess,
} from './process-tree.ts';
import { limitCommand, type CommandLimits, type Launch, type LimitEnforcement } from './resource-limits.ts';
import type { ProcessLimits } from './sandbox-settings.ts';
import { SANDBOX_WORKSPACE } from './mirror-disk.ts';

export type Isolation = 'bwrap' | 'process-group';
export type OutputStream = 'stdout' | 'stderr';

export interface SandboxOptions {
  /** Host directory holding the materialised workspace; bound read-write as the working tree. */
  workspaceDir: string;
  /** Working directory relative to the workspace root ('' = root), already validated by the path guard. */
  cwd: string;
  command: string;
  /** Variables the caller asked for; nothing else from the runner's own environment reaches the command. */
  env: Record<string, string>;
  /** Allow network access (default false). Only bubblewrap can withhold it; process-group mode always has it. */
  network?: boolean;
  /** Default 'bwrap'; 'process-group' runs the command without a sandbox, for TOOLGATE_SANDBOX=none. */
  isolation?: Isolation;
  /** The bubblewrap binary (default: as `locateBubblewrap` finds it); where it is missing the command is refused. */
  bwrapPath?: string;
  /**
   * bubblewrap only: the command sees an overlay with `workspaceDir` as its lower layer instead of
   * the directory itself, so its changes land in the upper layer (see overlay.ts).
   */
  overlay?: OverlayMount;
  /** bubblewrap only: the user the command becomes before it runs (see command-user.ts); default the runner's. */
  user?: CommandUser;
  /** Memory and process limits of the command and all it starts, and how they are enforced; default none. */
  limits?: { limits: ProcessLimits; enforcement?: LimitEnforcement };
  /** Default: stdout and stderr apart. */
  output?: CommandOutput;
  /** After this long the command is stopped (SIGTERM, SIGKILL after a grace) and its exit says so. */
  maxRunMs?: number;
  /** Decoded UTF-8; a chunk never ends inside a multi-byte character. Must not throw. */
  onOutput(stream: OutputStream, text: string): void;
}

export interface CommandExit {
  /** As the shell reports it: the exit status, or 128 + the signal number. */
  exitCode: number;
  /** The signal that ended the top process on the host, when one did (inside bubblewrap a signal arrives as 128 + n). */
  signal: string | null;
  /** Present when `maxRunMs` passed and the command was stopped for it. */
  runLimitReached?: true;
}

export interface RunningCommand {
  /** The pid of the spawned top process on the host (bwrap itself, or bash). */
  pid: number;
  /** Feeds stdin; ignored once input has ended or the command has exited. */
  write(data: string): void;
  /** Closes stdin. */
  endInput(): void;
  /** SIGTERM to the whole tree now, SIGKILL to the whole tree after graceMs if the command is still running. */
  stop(graceMs: number): void;
  /** SIGKILL to the whole tree now. */
  kill(): void;
  /**
   * Stops reading the command's output until `resumeOutput`: its pipes fill and its writes block,
   * so a command writing faster than its output is shipped waits instead of filling the runner's memory.
   */
  pauseOutput(): void;
  resumeOutput(): void;
  /** Settles once the command has exited and all its output has been delivered; never rejects. */
  exited: Promise<CommandExit>;
}

/** How often leftovers are killed while something still holds the output open after the command exited. */
const SWEEP_INTERVAL_MS = 100;
/** After this many sweeps the output is closed from this side, so `exited` settles even if a holder cannot be killed. */
const MAX_SWEEPS = 50;
/** How long a command stopped at its run-time limit has between SIGTERM and SIGKILL: the default grace of `stop`. */
const RUN_LIMIT_GRACE_MS = 5_000;

/** Whether bubblewrap is installed: at `bwrapPath` when given, else /usr/bin/bwrap or `bwrap` on PATH. */
export function bubblewrapInstalled(bwrapPath?: string): boolean {
  return locateBubblewrap(bwrapPath) !== undefined;
}

/** One sentence for the start-up log saying how commands are isolated and how an exec's changes are found. */
export function describeIsolation(isolation: Isolation = 'bwrap', overlay = true, bwrapPath?: string): string {
  if (isolation === 'process-group')
    return "TOOLGATE_SANDBOX=none: commands run WITHOUT a sandbox, in their own process group, as the runner's user";
  const bwrap = locateBubblewrap(bwrapPath);
  if (bwrap === undefined)
    return `bubblewrap is not installed (${bwrapPath ?? 'bwrap'}), so every command is refused: install it (${INSTALL_BUBBLEWRAP}), or set TOOLGATE_SANDBOX=none`;
  const tracking = overlay
    ? describeChangeTracking(detectOverlay())
    : 'exec changes are found by a full scan of the workspace copy (overlay turned off)';
  return `commands run in bubblewrap (${bwrap}): only the workspace is writable and there is no network unless configured; ${tracking}`;
}

/** Starts a command; throws ToolError for a bad cwd or env name, or when it cannot be started at all. */
export function startCommand(options: SandboxOptions): RunningCommand {
  const isolation = options.isolation ?? 'bwrap';
  const workspaceDir = resolve(options.workspaceDir);
  const segments = cwdSegments(options.cwd);
  requireDirectory(join(workspaceDir, ...segments), options.cwd);
  if (options.command.includes('\0')) {
    throw new ToolError('invalid_argument', 'The command contains a NUL character; remove it.', { field: 'command' });
  }
  const bwrap = isolation === 'bwrap' ? locateBubblewrap(options.bwrapPath) : undefined;
  if (isolation === 'bwrap' && bwrap === undefined) {
    throw new ToolError(
      'unavailable',
      `bubblewrap is not installed on this runner, and commands run only in its sandbox: install it (${INSTALL_BUBBLEWRAP}), or set TOOLGATE_SANDBOX=none to run commands unsandboxed on purpose.`,
    );
  }
  const limits = options.limits ? limitCommand(options.limits.limits, options.limits.enforcement) : undefined;
  let child: ChildProcessWithoutNullStreams;
  try {
    const { launch, cwd, env } =
      bwrap !== undefined
        ? bubblewrapLaunch(options, bwrap, workspaceDir, segments, limits)
        : processGroupLaunch(options, workspaceDir, segments, limits);
    child = limits
      ? limits.spawn(launch, { cwd, env })
      : spawn(launch.command, launch.args, { cwd, env, stdio: 'pipe', detached: true });
  } catch (error) {
    limits?.release();
    throw error;
  }
  return supervise(child, isolation, options, limits);
}

interface PreparedLaunch {
  launch: Launch;
  cwd: string;
  env: Record<string, string>;
}

function bubblewrapLaunch(
  options: SandboxOptions,
  bwrap: string,
  workspaceDir: string,
  segments: string[],
  limits: CommandLimits | undefined,
): PreparedLaunch {
  const cwd = posix.join(SANDBOX_WORKSPACE, ...segments);
  const { overlay, user } = options;
  const output = options.output ?? { kind: 'separate' };
  const terminal = output.kind === 'terminal';
  const env = commandEnvironment(cwd, options.env, terminal);
  const argv = commandArgv({
    bash: '/bin/bash',
    command: options.command,
    user,
    prefix: limits?.innerPrefix ?? [],
    output,
    callerShell: options.env.SHELL,
  });
  const args = bubblewrapArgs({
    workspaceDir: overlay?.layers.merged ?? workspaceDir,
    cwd,
    env: terminal ? { ...env, ...TERMINAL_LAUNCH_ENV } : env,
    network: options.network ?? false,
    command: options.command,
    argv,
    changesUser: user !== undefined,
  });
  // The overlay's root shows its upper directory's owner: the user's, so the command may create files at the top.
  if (overlay && user) chownSync(overlay.layers.upper, user.uid, user.gid);
  // The launcher mounts the overlay and then execs bwrap in place, so the spawned pid ends up bwrap's as without it.
  const launch = overlay ? overlayLaunch(overlay.support, overlay.layers, bwrap, args) : { command: bwrap, args };
  // bwrap itself needs no environment; --clearenv and --setenv give the command its own.
  return { launch, cwd: workspaceDir, env: {} };
}

function processGroupLaunch(
  options: SandboxOptions,
  workspaceDir: string,
  segments: string[],
  limits: CommandLimits | undefined,
): PreparedLaunch {
  const cwd = join(workspaceDir, ...segments);
  const output = options.output ?? { kind: 'separate' };
  const env = commandEnvironment(cwd, options.env, output.kind === 'terminal');
  const argv = commandArgv({
    bash: hostBash(),
    command: options.command,
    prefix: limits?.innerPrefix ?? [],
    output,
    callerShell: options.env.SHELL,
  });
  return {
    launch: { command: argv[0]!, args: argv.slice(1) },
    cwd,
    env: output.kind === 'terminal' ? { ...env, ...TERMINAL_LAUNCH_ENV } : env,
  };
}

function supervise(
  child: ChildProcessWithoutNullStreams,
  isolation: Isolation,
  options: SandboxOptions,
  limits: CommandLimits | undefined,
): RunningCommand {
  // A failed spawn reports its error asynchronously; this listener keeps it from crashing the runner.
  child.on('error', () => undefined);
  child.stdin.on('error', () => undefined);
  const pid = child.pid;
  if (pid === undefined) {
    limits?.release();
    throw new ToolError(
      'unavailable',
      'The command could not be started on this runner; check that bash and bubblewrap are installed.',
    );
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].setEncoding('utf8');
    child[stream].on('data', (text: string) => options.onOutput(stream, text));
  }
  const group = isolation === 'process-group' ? pid : undefined;
  const stdioTargets = readStdioTargets(pid);
  let topExited = false;
  let inputEnded = false;
  let runLimitReached = false;
  const killTimers = new Set<ReturnType<typeof setTimeout>>();

  /** Everything of the command still alive; after the top has exited its pid may name another process, so it no longer counts. */
  const tree = () => findProcessTree({ rootPid: topExited ? undefined : pid, processGroup: group, stdioTargets });
  const killTree = (rounds = 2) => {
    // A second round catches children forked between the first scan and the kill.
    for (let round = 0; round < rounds; round += 1) {
      // The cgroup holds everything the command forked, however it detached: none can fork past a kill of it all.
      limits?.kill();
      signalProcesses(
        tree().map((entry) => entry.pid),
        'SIGKILL',
      );
      if (group !== undefined) signalProcessGroup(group, 'SIGKILL');
    }
  };
  const stop = (graceMs: number) => {
    if (topExited) return;
    terminateTree();
    const timer = setTimeout(
      () => {
        killTimers.delete(timer);
        if (!topExited) killTree();
      },
      Math.max(0, graceMs),
    );
    killTimers.add(timer);
  };
  const runLimit =
    options.maxRunMs === undefined
      ? undefined
      : setTimeout(() => {
          runLimitReached = true;
          stop(RUN_LIMIT_GRACE_MS);
        }, options.maxRunMs);
  // A terminal's holder (`script`) passes on how its shell ended; TERM to it would end the session its own way instead.
  const terminal = options.output?.kind === 'terminal';
  const terminateTree = () => {
    const found = tree();
    if (group !== undefined && !terminal) {
      signalProcesses(
        found.map((entry) => entry.pid),
        'SIGTERM',
      );
      signalProcessGroup(group, 'SIGTERM');
      return;
    }
    // bwrap and the namespace's init (bwrap's child) would die or ignore TERM; the command's own processes get it.
    const init = new Set(
      group === undefined ? found.filter((entry) => entry.ppid === pid).map((entry) => entry.pid) : [],
    );
    const holder = (entry: HostProcess) => terminal && (group === undefined ? init.has(entry.ppid) : entry.pid === pid);
    const inside = found.filter(
      (entry) => (group !== undefined || (entry.pid !== pid && entry.ppid !== pid)) && !holder(entry),
    );
    // Before the command has started inside the sandbox there is nothing to stop gracefully.
    signalProcesses(inside.length > 0 ? inside.map((entry) => entry.pid) : [pid], 'SIGTERM');
  };

  const exited = new Promise<CommandExit>((settle) => {
    let sweeper: ReturnType<typeof setInterval> | undefined;
    child.once('exit', () => {
      topExited = true;
      clearTimeout(runLimit);
      for (const timer of killTimers) clearTimeout(timer);
      killTimers.clear();
      // bubblewrap's namespace dies with bwrap (--die-with-parent); a process group may still have members.
      if (group !== undefined) signalProcessGroup(group, 'SIGKILL');
      let sweeps = 0;
      sweeper = setInterval(() => {
        sweeps += 1;
        if (sweeps <= MAX_SWEEPS) return killTree(1);
        child.stdout.destroy();
        child.stderr.destroy();
      }, SWEEP_INTERVAL_MS);
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      clearInterval(sweeper);
      clearTimeout(runLimit);
      limits?.release();
      settle({ ...exitStatus(code, signal), ...(runLimitReached ? { runLimitReached: true as const } : {}) });
    });
  });

  return {
    pid,
    pauseOutput() {
      child.stdout.pause();
      child.stderr.pause();
    },
    resumeOutput() {
      child.stdout.resume();
      child.stderr.resume();
    },
    write(data) {
      if (!inputEnded && !topExited) child.stdin.write(data);
    },
    endInput() {
      if (inputEnded) return;
      inputEnded = true;
      child.stdin.end();
    },
    stop,
    kill() {
      killTree();
    },
    exited,
  };
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null): CommandExit {
  if (code !== null) return { exitCode: code, signal: null };
  const number = signal === null ? 0 : osConstants.signals[signal];
  return { exitCode: 128 + number, signal };
}

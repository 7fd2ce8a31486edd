// Runs one bash command on this host: inside bubblewrap where installed, else in its own process group.
//
// Either way the command's end ends everything it started: bubblewrap tears down the PID
// namespace when its command exits, and the process-group mode kills what is left, so no
// background process keeps running unsupervised after the command that started it.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { ToolError } from '../../core/errors.ts';
import { bubblewrapArgs, locateBubblewrap } from './bubblewrap.ts';
import { describeChangeTracking, detectOverlay, overlayLaunch, type OverlayMount } from './overlay.ts';
import { findProcessTree, readStdioTargets, signalProcesses, signalProcessGroup } from './process-tree.ts';
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
  /** Default: 'bwrap' where bubblewrap is installed, else 'process-group' (no isolation). */
  isolation?: Isolation;
  /**
   * bubblewrap only: the command sees an overlay with `workspaceDir` as its lower layer instead of
   * the directory itself, so its changes land in the upper layer (see overlay.ts).
   */
  overlay?: OverlayMount;
  /** Decoded UTF-8; a chunk never ends inside a multi-byte character. Must not throw. */
  onOutput(stream: OutputStream, text: string): void;
}

export interface CommandExit {
  /** As the shell reports it: the exit status, or 128 + the signal number. */
  exitCode: number;
  /** The signal that ended the top process on the host, when one did (inside bubblewrap a signal arrives as 128 + n). */
  signal: string | null;
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

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** How often leftovers are killed while something still holds the output open after the command exited. */
const SWEEP_INTERVAL_MS = 100;
/** After this many sweeps the output is closed from this side, so `exited` settles even if a holder cannot be killed. */
const MAX_SWEEPS = 50;

/** 'bwrap' when bubblewrap is installed (/usr/bin/bwrap or `bwrap` on PATH), else 'process-group'. */
export function detectIsolation(): Isolation {
  return locateBubblewrap() === undefined ? 'process-group' : 'bwrap';
}

/** One sentence for the runner's start-up log saying how commands are isolated and how an exec's changes are found. */
export function describeIsolation(isolation: Isolation = detectIsolation(), overlay = true): string {
  const tracking = overlay ? describeChangeTracking(detectOverlay()) : 'exec changes are found by a full scan of the workspace copy (overlay turned off)';
  return isolation === 'bwrap'
    ? `commands run in bubblewrap (${locateBubblewrap() ?? 'bwrap'}): only the workspace is writable and there is no network unless configured; ${tracking}`
    : 'bubblewrap not found: commands run without isolation in their own process group; install bubblewrap';
}

/** Starts a command; throws ToolError for a bad cwd or env name, or when it cannot be started at all. */
export function startCommand(options: SandboxOptions): RunningCommand {
  const isolation = options.isolation ?? detectIsolation();
  const workspaceDir = resolve(options.workspaceDir);
  const segments = cwdSegments(options.cwd);
  requireDirectory(join(workspaceDir, ...segments), options.cwd);
  if (options.command.includes('\0')) {
    throw new ToolError('invalid_argument', 'The command contains a NUL character; remove it.', { field: 'command' });
  }
  const child = isolation === 'bwrap' ? spawnBubblewrap(options, workspaceDir, segments) : spawnProcessGroup(options, workspaceDir, segments);
  return supervise(child, isolation, options.onOutput);
}

function spawnBubblewrap(options: SandboxOptions, workspaceDir: string, segments: string[]): ChildProcessWithoutNullStreams {
  const bwrap = locateBubblewrap();
  if (bwrap === undefined) {
    throw new ToolError('unavailable', 'bubblewrap is not installed on this runner; install it or use process-group isolation.');
  }
  const cwd = posix.join(SANDBOX_WORKSPACE, ...segments);
  const { overlay } = options;
  const args = bubblewrapArgs({ workspaceDir: overlay?.layers.merged ?? workspaceDir, cwd, env: commandEnvironment(cwd, options.env), network: options.network ?? false, command: options.command });
  // The launcher mounts the overlay and then execs bwrap in place, so the spawned pid ends up bwrap's as without it.
  const launch = overlay ? overlayLaunch(overlay.support, overlay.layers, bwrap, args) : { command: bwrap, args };
  // bwrap itself needs no environment; --clearenv and --setenv give the command its own.
  return spawn(launch.command, launch.args, { cwd: workspaceDir, env: {}, stdio: 'pipe', detached: true });
}

function spawnProcessGroup(options: SandboxOptions, workspaceDir: string, segments: string[]): ChildProcessWithoutNullStreams {
  const cwd = join(workspaceDir, ...segments);
  return spawn(hostBash(), ['--noprofile', '--norc', '-c', options.command], {
    cwd,
    env: commandEnvironment(cwd, options.env),
    stdio: 'pipe',
    detached: true,
  });
}

function supervise(child: ChildProcessWithoutNullStreams, isolation: Isolation, onOutput: SandboxOptions['onOutput']): RunningCommand {
  // A failed spawn reports its error asynchronously; this listener keeps it from crashing the runner.
  child.on('error', () => undefined);
  child.stdin.on('error', () => undefined);
  const pid = child.pid;
  if (pid === undefined) {
    throw new ToolError('unavailable', 'The command could not be started on this runner; check that bash and bubblewrap are installed.');
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].setEncoding('utf8');
    child[stream].on('data', (text: string) => onOutput(stream, text));
  }
  const group = isolation === 'process-group' ? pid : undefined;
  const stdioTargets = readStdioTargets(pid);
  let topExited = false;
  let inputEnded = false;
  const killTimers = new Set<ReturnType<typeof setTimeout>>();

  /** Everything of the command still alive; after the top has exited its pid may name another process, so it no longer counts. */
  const tree = () => findProcessTree({ rootPid: topExited ? undefined : pid, processGroup: group, stdioTargets });
  const killTree = (rounds = 2) => {
    // A second round catches children forked between the first scan and the kill.
    for (let round = 0; round < rounds; round += 1) {
      signalProcesses(tree().map((entry) => entry.pid), 'SIGKILL');
      if (group !== undefined) signalProcessGroup(group, 'SIGKILL');
    }
  };
  const terminateTree = () => {
    const found = tree();
    if (group !== undefined) {
      signalProcesses(found.map((entry) => entry.pid), 'SIGTERM');
      signalProcessGroup(group, 'SIGTERM');
      return;
    }
    // bwrap and the namespace's init (bwrap's child) would die or ignore TERM; the command's own processes get it.
    const inside = found.filter((entry) => entry.pid !== pid && entry.ppid !== pid);
    // Before the command has started inside the sandbox there is nothing to stop gracefully.
    signalProcesses(inside.length > 0 ? inside.map((entry) => entry.pid) : [pid], 'SIGTERM');
  };

  const exited = new Promise<CommandExit>((settle) => {
    let sweeper: ReturnType<typeof setInterval> | undefined;
    child.once('exit', () => {
      topExited = true;
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
      settle(exitStatus(code, signal));
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
    stop(graceMs) {
      if (topExited) return;
      terminateTree();
      const timer = setTimeout(() => {
        killTimers.delete(timer);
        if (!topExited) killTree();
      }, Math.max(0, graceMs));
      killTimers.add(timer);
    },
    kill() {
      killTree();
    },
    exited,
  };
}

/** The minimal environment plus the caller's variables, which may override it. */
function commandEnvironment(pwd: string, callerEnv: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(callerEnv)) {
    if (!ENV_NAME.test(name)) {
      throw new ToolError('invalid_argument', `Environment variable name "${name}" is invalid; use letters, digits and underscores, not starting with a digit.`, {
        field: 'env',
        name,
      });
    }
    if (value.includes('\0')) {
      throw new ToolError('invalid_argument', `Environment variable "${name}" contains a NUL character; remove it.`, { field: 'env', name });
    }
  }
  return { PATH: DEFAULT_PATH, HOME: '/tmp', LANG: 'C.UTF-8', TERM: 'dumb', PWD: pwd, ...callerEnv };
}

function cwdSegments(cwd: string): string[] {
  const segments = cwd.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) {
    throw new ToolError('path_outside_workspace', `The cwd "${cwd}" leaves the workspace; use a path inside it.`, { cwd });
  }
  return segments;
}

function requireDirectory(hostPath: string, cwd: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(hostPath).isDirectory();
  } catch {
    // Missing: reported below like a file.
  }
  if (!isDirectory) {
    throw new ToolError('not_found', `The cwd "${cwd}" is not a directory in the workspace; create it or pick another.`, { cwd });
  }
}

/** bash from the default PATH, so a caller's PATH never decides which shell runs the command. */
function hostBash(): string {
  for (const dir of DEFAULT_PATH.split(':')) {
    try {
      accessSync(join(dir, 'bash'), constants.X_OK);
      return join(dir, 'bash');
    } catch {
      // Not in this directory.
    }
  }
  return '/bin/bash';
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null): CommandExit {
  if (code !== null) return { exitCode: code, signal: null };
  const number = signal === null ? 0 : osConstants.signals[signal];
  return { exitCode: 128 + number, signal };
}

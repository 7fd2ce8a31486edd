// A started command watched to its end: its output and stdin, a stop or kill of all it started, and how it exited.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { ToolError } from '../../core/errors.ts';
import type { CommandOutput } from './command-line.ts';
import {
  findProcessTree,
  readStdioTargets,
  signalProcesses,
  signalProcessGroup,
  type HostProcess,
} from './process-tree.ts';
import type { CommandLimits } from './resource-limits.ts';

export type Isolation = 'bwrap' | 'process-group';
export type OutputStream = 'stdout' | 'stderr';

/** What watching a command needs of how it was started (part of SandboxOptions). */
export interface CommandSupervision {
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

/**
 * Watches a spawned command (bubblewrap, or bash in its own process group) to its end. Either way
 * the command's end ends everything it started: bubblewrap tears down the PID namespace when its
 * command exits, the process-group mode kills what is left, and a command with a cgroup of its own
 * is killed by its cgroup, so no background process keeps running unsupervised after the command
 * that started it.
 */
export function supervise(
  child: ChildProcessWithoutNullStreams,
  isolation: Isolation,
  options: CommandSupervision,
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

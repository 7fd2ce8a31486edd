// Launchers waiting in fresh cgroups ahead of need, so a command starts inside its cgroup without waiting for the move.
//
// Moving a process into a cgroup waits for an RCU grace period (milliseconds, tens on a busy
// host) before the kernel lets it go on. A parked launcher pays that while nothing waits for it:
// a bash already in its group, reading the program line it is to exec from its fd 3. A command
// takes one, writes its line and so starts in its group at once; a new one parks behind it.
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ProcessCgroup, type CgroupLayout } from './cgroups.ts';
import { hostBash } from './command-environment.ts';
import type { ProcessLimits } from './sandbox-settings.ts';

/** Exit status of a launcher that could not enter its cgroup or got no program line: nothing of a command ran. */
export const LAUNCH_FAILED = 125;
/** `$1` files to write its pid into, then the line from fd 3 (NUL-terminated words), exec'd in place with fd 3 closed. */
const PARKED = `n=$1; shift; while (( n > 0 )); do echo $$ > "$1" || { echo 'toolgate: could not move the command into its cgroup on this runner' >&2; exit ${LAUNCH_FAILED}; }; shift; n=$((n - 1)); done
mapfile -d '' -t line <&3; exec 3<&-; (( \${#line[@]} > 0 )) || exit ${LAUNCH_FAILED}; exec "\${line[@]}"`;
/** Launchers kept parked per set of limits: enough for a few commands starting together. */
const PARKED_PER_LIMITS = 2;

export interface Launched {
  child: ChildProcessWithoutNullStreams;
  group: ProcessCgroup;
}

const pools = new Map<string, Parked[]>();

/**
 * A launcher in a new cgroup of these limits, spawned (with pipes for stdin, stdout and stderr,
 * its own session, no environment) but not yet told what to run; `run` tells it.
 */
export function parkLauncher(layout: CgroupLayout, limits: Pick<ProcessLimits, 'memoryMb' | 'pids'>): Parked {
  const group = ProcessCgroup.create(layout, limits);
  try {
    const files = group.procsFiles;
    const child = spawn(
      hostBash(),
      ['--noprofile', '--norc', '-c', PARKED, 'toolgate-launcher', String(files.length), ...files],
      {
        cwd: '/',
        env: {},
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
        detached: true,
      },
    );
    return new Parked(child, group);
  } catch (error) {
    void group.remove();
    throw error;
  }
}

/**
 * Starts `command args` in a cgroup of its own with these limits, from a parked launcher when one
 * is waiting (then parks another); the caller owns the group. The program sees no environment and
 * `/` as its working directory: it sets up its own (bubblewrap does).
 */
export function launchInCgroup(
  layout: CgroupLayout,
  limits: Pick<ProcessLimits, 'memoryMb' | 'pids'>,
  command: string,
  args: readonly string[],
): Launched {
  const key = `${limits.memoryMb}:${limits.pids}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = []));
  let parked = pool.shift();
  while (parked && !parked.waiting) {
    parked.discard();
    parked = pool.shift();
  }
  // With none waiting (the first command, a burst) this one waits for its own move.
  const launcher = parked ?? parkLauncher(layout, limits);
  const launched = { child: launcher.run(command, args), group: launcher.group };
  // Spawning blocks the event loop for a moment: the next launchers park once this command is on its way.
  setImmediate(() => refill(key, layout, limits));
  return launched;
}

function refill(key: string, layout: CgroupLayout, limits: Pick<ProcessLimits, 'memoryMb' | 'pids'>): void {
  // Closed meanwhile: nothing parks until the next command asks.
  const pool = pools.get(key);
  if (!pool) return;
  try {
    while (pool.length < PARKED_PER_LIMITS) pool.push(parkLauncher(layout, limits).keepIdle());
  } catch {
    // No new group could be made now: the next command makes its own, and says why if it cannot.
  }
}

/** Ends every parked launcher and removes its group (a runner stopping). */
export function closeParkedLaunchers(): void {
  for (const pool of pools.values()) for (const parked of pool.splice(0)) parked.discard();
  pools.clear();
}

export class Parked {
  private exited = false;

  constructor(
    private readonly child: ChildProcess,
    readonly group: ProcessCgroup,
  ) {
    // A failed spawn or a launcher that could not enter its group ends here; it is never handed out.
    child.on('error', () => undefined);
    child.once('exit', () => (this.exited = true));
  }

  /** Whether it still waits for a program line. */
  get waiting(): boolean {
    return !this.exited && this.child.pid !== undefined;
  }

  /** Lets the runner's process exit while it waits. */
  keepIdle(): this {
    this.child.unref();
    for (const stream of this.child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    return this;
  }

  /** Hands it its program line: it execs in place, so its pid and pipes become the command's. */
  run(command: string, args: readonly string[]): ChildProcessWithoutNullStreams {
    this.child.ref();
    for (const stream of this.child.stdio) (stream as { ref?: () => void } | null)?.ref?.();
    const line = this.child.stdio[3] as Writable;
    line.on('error', () => undefined);
    line.end([command, ...args].map((word) => `${word}\0`).join(''));
    return this.child as ChildProcessWithoutNullStreams;
  }

  discard(): void {
    (this.child.stdio[3] as Writable | null)?.destroy();
    for (const stream of [this.child.stdout, this.child.stderr] as (Readable | null)[]) stream?.destroy();
    void this.group.remove();
  }
}

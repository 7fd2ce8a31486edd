// Enforces a command's memory and process limits: a cgroup of its own where the host has cgroups, else rlimits set by prlimit.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { detectCgroups } from './cgroup-probe.ts';
import { ProcessCgroup, type CgroupLayout } from './cgroups.ts';
import { findUtility } from './command-environment.ts';
import { LAUNCH_FAILED, launchInCgroup } from './parked-launchers.ts';
import type { ProcessLimits } from './sandbox-settings.ts';

export type LimitEnforcement =
  | { kind: 'cgroup'; layout: CgroupLayout }
  /** RLIMIT_DATA and RLIMIT_NPROC, which counts per uid: a dedicated uid makes it a bound on the commands together. */
  | { kind: 'rlimit'; prlimit: string; reason: string }
  | { kind: 'none'; reason: string };

/** A program and its arguments, as spawn takes them. */
export interface Launch {
  command: string;
  args: string[];
}

/** One command's limits, set up before it starts. */
export interface CommandLimits {
  /** What runs first inside the sandbox, after the uid change and before bash (prlimit under rlimits). */
  innerPrefix: string[];
  /** Spawns the launch (pipes for its stdio, its own session) so that nothing of it runs outside the limits. */
  spawn(launch: Launch, options: { cwd: string; env: Record<string, string> }): ChildProcessWithoutNullStreams;
  /** SIGKILL to everything inside the limits' cgroup (nothing under rlimits). */
  kill(): void;
  /** Removes the cgroup once the command has ended, in the background. */
  release(): void;
}

const JOIN = `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo 'toolgate: could not move the command into its cgroup on this runner' >&2; exit ${LAUNCH_FAILED}; }; shift; n=$((n - 1)); done; exec "$@"`;

let detected: LimitEnforcement | undefined;

/** cgroups where the host has them, else rlimits where prlimit is installed; found once. */
export function detectLimitEnforcement(): LimitEnforcement {
  if (detected) return detected;
  const cgroups = detectCgroups();
  detected = cgroups.layout ? { kind: 'cgroup', layout: cgroups.layout } : rlimitEnforcement(cgroups.reason);
  return detected;
}

/** rlimits through prlimit (util-linux), or none when it is missing. */
export function rlimitEnforcement(reason: string): LimitEnforcement {
  const prlimit = findUtility('prlimit');
  return prlimit
    ? { kind: 'rlimit', prlimit, reason }
    : { kind: 'none', reason: `${reason}; prlimit (util-linux) is missing too` };
}

/** One sentence for the start-up line: the limits and how they are enforced. */
export function describeLimits(
  limits: ProcessLimits,
  enforcement: LimitEnforcement = detectLimitEnforcement(),
): string {
  const values = `${limits.memoryMb} MB of memory and ${limits.pids} processes per command, started processes stopped after ${limits.maxProcessMs} ms`;
  switch (enforcement.kind) {
    case 'cgroup':
      return `${values}; memory and processes enforced with cgroup v${enforcement.layout.version} (a cgroup per command)`;
    case 'rlimit':
      return `${values}; memory and processes enforced with rlimits (data size, and processes per uid), since ${enforcement.reason}`;
    case 'none':
      return `${values}; memory and processes NOT enforced, since ${enforcement.reason}`;
  }
}

/** Sets up one command's limits; throws when its cgroup cannot be made. */
export function limitCommand(
  limits: ProcessLimits,
  enforcement: LimitEnforcement = detectLimitEnforcement(),
): CommandLimits {
  const spawnPlain: CommandLimits['spawn'] = (launch, options) =>
    spawn(launch.command, launch.args, { ...options, stdio: 'pipe', detached: true });
  if (enforcement.kind === 'rlimit') {
    const prefix = [enforcement.prlimit, `--data=${limits.memoryMb * 1024 * 1024}`, `--nproc=${limits.pids}`, '--'];
    return { innerPrefix: prefix, spawn: spawnPlain, kill: () => undefined, release: () => undefined };
  }
  if (enforcement.kind === 'none')
    return { innerPrefix: [], spawn: spawnPlain, kill: () => undefined, release: () => undefined };
  const { layout } = enforcement;
  let group: ProcessCgroup | undefined;
  return {
    innerPrefix: [],
    spawn(launch, options) {
      // A launch that sets up its own environment (bubblewrap) starts from a launcher parked in its group ahead of time.
      if (Object.keys(options.env).length === 0) {
        const launched = launchInCgroup(layout, limits, launch.command, launch.args);
        group = launched.group;
        return launched.child;
      }
      // One that needs its environment and directory from the spawn enters its group first, then execs in place.
      group = ProcessCgroup.create(layout, limits);
      const files = group.procsFiles;
      return spawnPlain(
        {
          command: '/bin/sh',
          args: ['-c', JOIN, 'toolgate-limits', String(files.length), ...files, launch.command, ...launch.args],
        },
        options,
      );
    },
    kill: () => group?.kill(),
    release: () => void group?.remove(),
  };
}

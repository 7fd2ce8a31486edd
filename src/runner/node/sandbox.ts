// Runs one bash command on this host: inside bubblewrap, or (TOOLGATE_SANDBOX=none, on purpose) unsandboxed in its own process group.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chownSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { ToolError } from '../../core/errors.ts';
import { bubblewrapArgs, INSTALL_BUBBLEWRAP, locateBubblewrap } from './bubblewrap.ts';
import { commandEnvironment, cwdSegments, hostBash, requireDirectory } from './command-environment.ts';
import { commandArgv, TERMINAL_LAUNCH_ENV } from './command-line.ts';
import type { CommandUser } from './command-user.ts';
import { describeChangeTracking, detectOverlay, overlayLaunch, type OverlayMount } from './overlay.ts';
import { limitCommand, type CommandLimits, type Launch, type LimitEnforcement } from './resource-limits.ts';
import type { ProcessLimits } from './sandbox-settings.ts';
import { SANDBOX_WORKSPACE } from './mirror-disk.ts';
import { supervise, type CommandSupervision, type Isolation, type RunningCommand } from './running-command.ts';

export interface SandboxOptions extends CommandSupervision {
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
}

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

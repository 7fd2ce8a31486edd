// How one runner confines its commands, resolved once from its settings: the sandbox, the user, the limits; and the start-up line saying so.
import type { LeasedJob } from '../../contract/runner-protocol.ts';
import type { CommandOutput } from './command-line.ts';
import { commandUserFor, handOver, type CommandUser } from './command-user.ts';
import type { OverlaySupport } from './overlay.ts';
import { closeParkedLaunchers } from './parked-launchers.ts';
import { describeLimits, detectLimitEnforcement, type LimitEnforcement } from './resource-limits.ts';
import type { Isolation } from './running-command.ts';
import { describeIsolation, type SandboxOptions } from './sandbox.ts';
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from './sandbox-settings.ts';

export class RunnerSandbox {
  readonly isolation: Isolation;
  /** Who commands run as: a user of their own when the runner is root and they run in bubblewrap. */
  readonly user: CommandUser | undefined;
  private enforcement: LimitEnforcement | undefined;

  constructor(
    readonly settings: SandboxSettings = DEFAULT_SANDBOX_SETTINGS,
    /** Overrides the settings' choice (tests). */
    isolation?: Isolation,
  ) {
    this.isolation = isolation ?? (settings.mode === 'none' ? 'process-group' : 'bwrap');
    // Unsandboxed commands run in the copy itself, which no other user may reach: they keep the runner's user.
    this.user = this.isolation === 'bwrap' ? commandUserFor(settings.commandUid) : undefined;
  }

  /** How limits are enforced here, found on first use (it makes and removes a cgroup). */
  get limitEnforcement(): LimitEnforcement {
    this.enforcement ??= detectLimitEnforcement();
    return this.enforcement;
  }

  /** What `startCommand` takes from the sandbox for a job. */
  commandOptions(
    job: LeasedJob,
  ): Pick<SandboxOptions, 'isolation' | 'bwrapPath' | 'user' | 'limits' | 'output' | 'maxRunMs'> {
    // exec answers stdout and stderr apart; a started process has one log, in the order it was written.
    let output: CommandOutput = { kind: 'separate' };
    if (job.mode === 'start') output = job.terminal ? { kind: 'terminal', size: job.terminal } : { kind: 'merged' };
    return {
      isolation: this.isolation,
      bwrapPath: this.settings.bwrapPath,
      user: this.user,
      limits: { limits: this.settings.limits, enforcement: this.limitEnforcement },
      output,
      // exec has its own timeoutMs.
      maxRunMs: job.mode === 'start' ? this.settings.limits.maxProcessMs : undefined,
    };
  }

  /** Why a started process ended `stopped` without a stop request. */
  get runLimitNote(): string {
    return `stopped after running ${this.settings.limits.maxProcessMs} ms, the most a started process may run (TOOLGATE_MAX_PROCESS_MS)`;
  }

  /** Ends the launchers parked for commands to come (the runner stops). */
  close(): void {
    closeParkedLaunchers();
  }

  /** Makes a copy the runner has just written the user's, so its commands can change it. */
  async handOver(dir: string): Promise<void> {
    if (this.user) await handOver(dir, this.user);
  }

  /**
   * Whether an exec may run over this kind of overlay: one mounted in a user namespace of its own
   * maps only root, which leaves the command no other uid to change to.
   */
  acceptsOverlay(support: OverlaySupport): boolean {
    return this.user === undefined || support.kind === 'root';
  }

  /** The start-up line: how commands are isolated, as whom, with which limits; `warning` when they run unsandboxed or are refused. */
  describe(overlay: boolean): { text: string; warning: boolean } {
    const isolation = describeIsolation(this.isolation, overlay, this.settings.bwrapPath);
    const refused = isolation.startsWith('bubblewrap is not installed');
    const who = this.user
      ? `; commands run as uid ${this.user.uid} (TOOLGATE_RUNNER_UID), never as the runner's root`
      : '';
    return {
      text: `${isolation}${refused ? '' : who}; ${describeLimits(this.settings.limits, this.limitEnforcement)}`,
      warning: refused || this.isolation === 'process-group',
    };
  }
}

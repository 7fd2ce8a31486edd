// A runner: leases bash jobs from a toolgate server, runs them in a sandbox, streams output, syncs files back.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { makePrivateDir } from './private-dir.ts';
import type { LeasedJob } from '../../contract/runner-protocol.ts';
import { MAX_EXEC_STREAM_CHARS } from '../../contract/tool-answers.ts';
import { KeyRefusedError, RunnerClient, StaleLeaseError, type RunnerTransport } from '../runner-client.ts';
import { BlobFiles } from './blob-files.ts';
import { OutputPump } from './output-pump.ts';
import { ProcessControl } from './process-control.ts';
import { clearLayers, createLayers, detectOverlay, removeLayers, type OverlayMount } from './overlay.ts';
import { RunnerSandbox } from './runner-sandbox.ts';
import type { RunningCommand } from './running-command.ts';
import { startCommand } from './sandbox.ts';
import type { SandboxSettings } from './sandbox-settings.ts';
import { WorkspaceCopies } from './workspace-copies.ts';
import type { WorkspaceMirror } from './workspace-mirror.ts';

export interface RunnerOptions {
  url: string;
  key: string;
  /** Runner-local directory: workspace copies and the blob cache; made 0700 at start. */
  dataDir: string;
  runnerId?: string;
  /** Jobs run at once (default 8). */
  concurrency?: number;
  /** How commands are confined: TOOLGATE_SANDBOX, TOOLGATE_RUNNER_UID and the per-process limits (default: their defaults). */
  sandbox?: SandboxSettings;
  /** Overrides `sandbox.mode` (tests). */
  isolation?: 'bwrap' | 'process-group';
  /** Run exec jobs over an overlay of the workspace copy where this host can (default true); false scans the copy after each. */
  overlay?: boolean;
  network?: boolean;
  /** Characters of stdout and of stderr an exec keeps for its answer (default 1,048,576 each). */
  maxExecOutputChars?: number;
  log?: (message: string) => void;
  /** How requests reach the server (default: fetch over the network; see `inProcessTransport`). */
  transport?: RunnerTransport;
  /** Called once when the server refuses the key for the runner protocol; the runner has stopped leasing. */
  onKeyRefused?: (message: string) => void;
}

const LEASE_WAIT_MS = 20_000;
/** An exec-only lease waits less, so its slot soon asks again for any job once started processes leave room. */
const EXEC_ONLY_WAIT_MS = 3_000;

export class Runner {
  readonly id: string;
  private readonly client: RunnerClient;
  private readonly blobs: BlobFiles;
  readonly sandbox: RunnerSandbox;
  private readonly copies: WorkspaceCopies;
  private readonly running = new Set<RunningCommand>();
  private staleLayersCleared: Promise<void> | undefined;
  private stopping = false;
  private readonly leasing = new AbortController();
  private loops: Promise<void>[] = [];
  /** Started processes running now (they hold a slot for as long as they run). */
  private runningStarts = 0;
  /** Lease requests waiting now that may bring a started process. */
  private anyJobPolls = 0;

  constructor(private readonly options: RunnerOptions) {
    this.id = options.runnerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.client = new RunnerClient(options.url, options.key, undefined, options.transport);
    this.blobs = new BlobFiles(join(options.dataDir, 'blobs'));
    this.sandbox = new RunnerSandbox(options.sandbox, options.isolation);
    this.copies = new WorkspaceCopies(this.client, options.dataDir, this.blobs, this.sandbox);
  }

  start(): void {
    // Its copies hold tenants' files and its cache their blobs: the runner's user's alone.
    makePrivateDir(this.options.dataDir);
    this.loops = Array.from({ length: this.slots }, () => this.loop());
  }

  /** Jobs run at once. */
  private get slots(): number {
    return this.options.concurrency ?? 8;
  }

  /** Stops leasing and kills what is still running (its jobs become lost on the server). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.leasing.abort();
    for (const command of this.running) command.kill();
    this.sandbox.close();
    await Promise.allSettled(this.loops);
    await this.copies.close();
  }

  /**
   * One slot: leases a job, runs it, again. Started processes never take the last free slot
   * (with more than one): each lease that may bring a started process counts as one, so at most
   * as many of those wait as there are slots left for started processes; the other slots ask for
   * exec jobs only, and ask again sooner (a slot for started processes may free meanwhile). No
   * lease is ever abandoned for another: a request the server cannot tell was given up could be
   * handed a job nobody runs.
   */
  private async loop(): Promise<void> {
    while (!this.stopping) {
      let job: LeasedJob | undefined;
      const execOnly = this.slots > 1 && this.anyJobPolls >= this.slots - 1 - this.runningStarts;
      if (!execOnly) this.anyJobPolls += 1;
      try {
        job = await this.client.lease(
          this.id,
          execOnly ? EXEC_ONLY_WAIT_MS : LEASE_WAIT_MS,
          this.leasing.signal,
          execOnly,
        );
      } catch (error) {
        if (this.stopping) return;
        if (error instanceof KeyRefusedError) {
          // Retrying cannot help a key of the wrong role or a revoked one: stop leasing, say why once.
          this.stopping = true;
          this.leasing.abort();
          this.options.onKeyRefused?.(error.message);
          return;
        }
        this.log(`lease failed: ${(error as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      } finally {
        if (!execOnly) this.anyJobPolls -= 1;
      }
      if (job?.mode === 'start') this.runningStarts += 1;
      if (job)
        await this.run(job).catch((error: unknown) => this.log(`job ${job.processId}: ${(error as Error).message}`));
      if (job?.mode === 'start') this.runningStarts -= 1;
      // Cache copies of the blobs the job fetched are written once it has answered, off its path.
      if (job)
        void this.blobs
          .storeDeferred()
          .catch((error: unknown) => this.log(`could not cache blobs: ${(error as Error).message}`));
    }
  }

  private async run(job: LeasedJob): Promise<void> {
    let mirror: WorkspaceMirror;
    // The workspace is read under the lease: a large cold copy must not outlast it unrenewed.
    const renewing = setInterval(
      () => void this.client.heartbeat(job, job.token, 0).catch(() => undefined),
      heartbeatMs(job),
    );
    try {
      mirror = await this.copies.prepare(job);
    } catch (error) {
      await this.report(job, {
        exitCode: null,
        status: 'failed',
        error: `could not prepare the workspace: ${(error as Error).message}`,
      });
      return;
    } finally {
      clearInterval(renewing);
    }
    const overlay = await this.overlayFor(job, mirror);
    // Until its changes are synced, a command bound in place leaves the copy holding more than is known.
    if (!overlay) this.copies.bindInPlace(job, mirror);
    try {
      await this.runCommand(job, mirror, overlay);
    } finally {
      if (overlay)
        await removeLayers(overlay.layers).catch((error: unknown) =>
          this.log(`could not remove ${overlay.layers.dir}: ${(error as Error).message}`),
        );
      else this.copies.unbind(job);
    }
  }

  /**
   * A fresh overlay for an exec where this host can mount one, so its changes are read from the
   * upper layer instead of a walk of the copy; undefined binds the copy itself. `start` jobs always
   * bind it: processes running side by side keep sharing one live directory.
   */
  private async overlayFor(job: LeasedJob, mirror: WorkspaceMirror): Promise<OverlayMount | undefined> {
    if (job.mode !== 'exec' || this.options.overlay === false || this.sandbox.isolation !== 'bwrap') return undefined;
    const parent = join(this.options.dataDir, 'overlays');
    const { support } = detectOverlay(parent);
    if (!support || !this.sandbox.acceptsOverlay(support)) return undefined;
    // Layers a previous runner on this data directory left behind go first, once.
    this.staleLayersCleared ??= clearLayers(parent);
    await this.staleLayersCleared;
    const layers = await createLayers(parent, mirror.root).catch(() => undefined);
    return layers && { support, layers };
  }

  private async runCommand(job: LeasedJob, mirror: WorkspaceMirror, overlay: OverlayMount | undefined): Promise<void> {
    const output = new OutputPump(this.client, job, this.options.maxExecOutputChars ?? MAX_EXEC_STREAM_CHARS);
    let command: RunningCommand;
    try {
      command = startCommand({
        workspaceDir: mirror.root,
        cwd: job.cwd,
        command: job.command,
        env: job.env,
        network: this.options.network,
        ...this.sandbox.commandOptions(job),
        overlay,
        onOutput: (stream, text) => output.add(stream, text),
      });
    } catch (error) {
      await this.report(job, {
        exitCode: null,
        status: 'failed',
        error: `could not start the command: ${(error as Error).message}`,
      });
      return;
    }
    this.running.add(command);
    output.onPressure = (high) => (high ? command.pauseOutput() : command.resumeOutput());
    let abandoned = false;
    let timedOut = false;
    const abandon = (error: unknown) => {
      if (error instanceof StaleLeaseError && !abandoned) {
        abandoned = true;
        command.kill();
      }
    };
    output.onStale = abandon;
    await this.client.started(job, job.token, command.pid).catch(abandon);
    // Stdin and a stop arrive through it as soon as they are written; it renews the lease meanwhile.
    const control = new ProcessControl(this.client, job, command, heartbeatMs(job), abandon);
    const timer =
      job.timeoutMs === null
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            command.kill();
          }, job.timeoutMs);
    const exit = await command.exited;
    control.close();
    if (timer) clearTimeout(timer);
    this.running.delete(command);
    await output.close();
    // A runner shutting down killed the command: it reports nothing, so the job becomes lost
    // (its runner vanished) rather than an exit the command never chose. Over an overlay its
    // changes go with the upper layer; bound in place they stay in the copy for the next scan.
    if (abandoned || this.stopping) return;
    const sync = await this.copies.syncBack(job, mirror, overlay).catch((error: unknown) => {
      abandon(error);
      return { conflicts: [] as string[], error: `could not sync files back: ${(error as Error).message}` };
    });
    if (abandoned) return;
    await this.report(job, {
      exitCode: exit.exitCode,
      status: control.stopRequested || exit.runLimitReached ? 'stopped' : 'exited',
      timedOut,
      conflicts: sync.conflicts,
      ...(sync.error || exit.runLimitReached ? { error: sync.error ?? this.sandbox.runLimitNote } : {}),
      ...(job.mode === 'exec' ? output.execStreams() : {}),
    });
  }

  private async report(job: LeasedJob, report: Parameters<RunnerClient['exit']>[2]): Promise<void> {
    await this.client.exit(job, job.token, report).catch((error: unknown) => {
      if (!(error instanceof StaleLeaseError)) throw error;
    });
  }

  private log(message: string): void {
    (this.options.log ?? ((text: string) => console.error(`toolgate runner: ${text}`)))(message);
  }
}

/** How often a job's lease is renewed (the longest its control request waits): three times a lease, so one lost heartbeat never loses it. */
function heartbeatMs(job: LeasedJob): number {
  return Math.max(200, Math.floor(job.leaseMs / 3));
}

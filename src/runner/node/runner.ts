// A runner: leases bash jobs from a toolgate server, runs them in a sandbox, streams output, syncs files back.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { cutAtChars } from '../../tools/text-lines.ts';
import { KeyedLock } from '../../workspace/keyed-lock.ts';
import { RunnerClient, StaleLeaseError, type LeasedJob, type SyncChange } from '../runner-client.ts';
import { BlobFiles } from './blob-files.ts';
import { startCommand, type RunningCommand } from './sandbox.ts';
import { WorkspaceMirror } from './workspace-mirror.ts';

export interface RunnerOptions {
  url: string;
  key: string;
  /** Runner-local directory: workspace copies and the blob cache. */
  dataDir: string;
  runnerId?: string;
  /** Jobs run at once (default 8). */
  concurrency?: number;
  isolation?: 'bwrap' | 'process-group';
  network?: boolean;
  /** Characters of stdout and of stderr an exec keeps for its answer (default 1,048,576 each). */
  maxExecOutputChars?: number;
  log?: (message: string) => void;
}

const LEASE_WAIT_MS = 20_000;
const FLUSH_MS = 50;
/** The largest output batch, well under the server's body limit. */
const MAX_BATCH_CHARS = 2 * 1024 * 1024;
/** Output waiting to be shipped beyond which the command's output is paused. */
const MAX_WAITING_CHARS = 8 * 1024 * 1024;

export class Runner {
  readonly id: string;
  private readonly client: RunnerClient;
  private readonly blobs: BlobFiles;
  private readonly mirrors = new Map<string, WorkspaceMirror>();
  /** Materialise and sync of one workspace copy take turns; commands themselves run side by side. */
  private readonly workspaceLock = new KeyedLock();
  private readonly running = new Set<RunningCommand>();
  private stopping = false;
  private readonly leasing = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(private readonly options: RunnerOptions) {
    this.id = options.runnerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.client = new RunnerClient(options.url, options.key);
    this.blobs = new BlobFiles(join(options.dataDir, 'blobs'));
  }

  start(): void {
    this.loops = Array.from({ length: this.options.concurrency ?? 8 }, () => this.loop());
  }

  /** Stops leasing and kills what is still running (its jobs become lost on the server). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.leasing.abort();
    for (const command of this.running) command.kill();
    await Promise.allSettled(this.loops);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let job: LeasedJob | undefined;
      try {
        job = await this.client.lease(this.id, LEASE_WAIT_MS, this.leasing.signal);
      } catch (error) {
        if (this.stopping) return;
        this.log(`lease failed: ${(error as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      if (job) await this.run(job).catch((error: unknown) => this.log(`job ${job.processId}: ${(error as Error).message}`));
    }
  }

  private mirror(workspace: string): WorkspaceMirror {
    let mirror = this.mirrors.get(workspace);
    if (!mirror) {
      mirror = new WorkspaceMirror(join(this.options.dataDir, 'workspaces', workspace), this.blobs);
      this.mirrors.set(workspace, mirror);
    }
    return mirror;
  }

  private async run(job: LeasedJob): Promise<void> {
    const mirror = this.mirror(job.workspace);
    try {
      await this.workspaceLock.run(job.workspace, async () => {
        if (mirror.version !== undefined && mirror.version === job.workspaceVersion) return;
        const manifest = await this.client.manifest(job.workspace);
        mirror.version = undefined;
        await mirror.materialise(
          manifest.entries,
          (hash) => this.client.blob(job.workspace, hash),
          (hashes) => this.client.blobs(job.workspace, hashes),
        );
        mirror.version = manifest.version;
      });
    } catch (error) {
      await this.report(job, { exitCode: null, status: 'failed', error: `could not prepare the workspace: ${(error as Error).message}` });
      return;
    }
    const output = new OutputPump(this.client, job, this.options.maxExecOutputChars ?? 1_048_576);
    let command: RunningCommand;
    try {
      command = startCommand({
        workspaceDir: mirror.root,
        cwd: job.cwd,
        command: job.command,
        env: job.env,
        network: this.options.network,
        isolation: this.options.isolation,
        onOutput: (stream, text) => output.add(stream, text),
      });
    } catch (error) {
      await this.report(job, { exitCode: null, status: 'failed', error: `could not start the command: ${(error as Error).message}` });
      return;
    }
    this.running.add(command);
    output.onPressure = (high) => (high ? command.pauseOutput() : command.resumeOutput());
    let abandoned = false;
    let stopRequested = false;
    let timedOut = false;
    const abandon = (error: unknown) => {
      if (error instanceof StaleLeaseError && !abandoned) {
        abandoned = true;
        command.kill();
      }
    };
    output.onStale = abandon;
    await this.client.started(job.processId, job.token, command.pid).catch(abandon);
    const heartbeat = setInterval(() => {
      this.client.heartbeat(job.processId, job.token).then((reply) => {
        for (const chunk of reply.stdin) {
          if (chunk.data) command.write(chunk.data);
          if (chunk.eof) command.endInput();
        }
        if (reply.stop && !stopRequested) {
          stopRequested = true;
          command.stop(reply.stop.graceMs);
        }
      }, abandon);
    }, Math.max(200, Math.floor(job.leaseMs / 3)));
    const timer =
      job.timeoutMs === null
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            command.kill();
          }, job.timeoutMs);
    const exit = await command.exited;
    clearInterval(heartbeat);
    if (timer) clearTimeout(timer);
    this.running.delete(command);
    await output.close();
    // A runner shutting down killed the command: it reports nothing, so the job becomes lost
    // (its runner vanished) rather than an exit the command never chose.
    if (abandoned || this.stopping) return;
    const sync = await this.workspaceLock.run(job.workspace, () => this.syncBack(job, mirror)).catch((error: unknown) => {
      abandon(error);
      return { conflicts: [] as string[], error: `could not sync files back: ${(error as Error).message}` };
    });
    if (abandoned) return;
    await this.report(job, {
      exitCode: exit.exitCode,
      status: stopRequested ? 'stopped' : 'exited',
      timedOut,
      conflicts: sync.conflicts,
      ...(sync.error ? { error: sync.error } : {}),
      ...(job.mode === 'exec' ? output.execStreams() : {}),
    });
  }

  private async syncBack(job: LeasedJob, mirror: WorkspaceMirror): Promise<{ conflicts: string[]; error?: string }> {
    const { changes, skipped } = await mirror.scan();
    const wire: SyncChange[] = changes.map((change) =>
      change.op === 'write' ? { op: 'write', path: change.path, contentBase64: Buffer.from(change.content).toString('base64'), baseVersion: change.baseVersion } : change,
    );
    if (wire.length === 0 && skipped.length === 0) return { conflicts: [] };
    const before = mirror.version;
    const answer = wire.length > 0 ? await this.client.sync(job.processId, job.token, wire) : { committed: [], entries: [], conflicts: [], skipped: [], version: null };
    // Bring the copy's record up to what the server now holds; conflicted and refused paths are
    // forgotten, so the next materialise puts the server's side of them back on disk.
    mirror.forget([...answer.conflicts, ...answer.skipped.map((entry) => entry.path), ...answer.committed]);
    await mirror.accept(answer.entries);
    const refused = [...skipped, ...answer.skipped];
    // The copy equals the new version only when our commit was the only one since it was made.
    const clean = answer.conflicts.length === 0 && refused.length === 0 && before !== undefined && answer.version === before + 1;
    mirror.version = clean ? (answer.version ?? undefined) : undefined;
    return {
      conflicts: answer.conflicts,
      ...(refused.length > 0 ? { error: `not synced: ${refused.map((entry) => `${entry.path} (${entry.reason})`).join('; ')}` } : {}),
    };
  }

  private async report(job: LeasedJob, report: Parameters<RunnerClient['exit']>[2]): Promise<void> {
    await this.client.exit(job.processId, job.token, report).catch((error: unknown) => {
      if (!(error instanceof StaleLeaseError)) throw error;
    });
  }

  private log(message: string): void {
    (this.options.log ?? ((text: string) => console.error(`toolgate runner: ${text}`)))(message);
  }
}

/**
 * Ships a command's output to the server in order, one request at a time, and keeps exec's
 * separate streams. While a request is out, output gathers; a runner that falls far behind keeps
 * only the tail the server's ring would keep and reports the rest as skipped, so memory stays
 * bounded and a fast writer is not slowed to the speed of the log store. When the ring is too big
 * to skip that way, reading pauses instead.
 */
class OutputPump {
  onStale: (error: unknown) => void = () => undefined;
  /** Called with true when too much output waits to be shipped, and with false once it has drained. */
  onPressure: (high: boolean) => void = () => undefined;
  private pending = '';
  /** Characters dropped from the front of `pending` since the last batch. */
  private skipped = 0;
  /** Characters accounted for by batches already sent (skipped ones included). */
  private sent = 0;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private paused = false;
  private readonly streams = { stdout: '', stderr: '' };
  private truncated = false;
  private readonly canSkip: boolean;

  constructor(
    private readonly client: RunnerClient,
    private readonly job: LeasedJob,
    private readonly maxStreamChars: number,
  ) {
    this.canSkip = job.outputChars <= MAX_BATCH_CHARS;
  }

  add(stream: 'stdout' | 'stderr', text: string): void {
    this.pending += text;
    if (this.job.mode === 'exec') {
      const room = this.maxStreamChars - this.streams[stream].length;
      if (text.length > room) this.truncated = true;
      if (room > 0) this.streams[stream] += cutAtChars(text, room);
    }
    if (this.canSkip && this.pending.length > 2 * this.job.outputChars) {
      let cut = this.pending.length - this.job.outputChars;
      // Never keep half of a surrogate pair: drop the whole pair.
      const code = this.pending.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) cut += 1;
      this.skipped += cut;
      this.pending = this.pending.slice(cut);
    }
    this.pressure();
    if (this.inFlight === undefined) this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  execStreams(): { stdout: string; stderr: string; truncated: boolean } {
    return { ...this.streams, truncated: this.truncated };
  }

  async close(): Promise<void> {
    while (this.inFlight !== undefined || this.pending !== '') {
      if (this.inFlight === undefined) this.flush();
      await this.inFlight;
    }
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight !== undefined || this.pending === '') return;
    const data = this.skipped > 0 ? this.pending : cutAtChars(this.pending, MAX_BATCH_CHARS);
    const { skipped } = this;
    const offset = this.sent;
    this.pending = this.pending.slice(data.length);
    this.skipped = 0;
    this.sent += skipped + data.length;
    this.inFlight = this.client
      .output(this.job.processId, this.job.token, data, offset, skipped)
      .catch(this.onStale)
      .finally(() => {
        this.inFlight = undefined;
        this.pressure();
        if (this.pending !== '') this.flush();
      });
  }

  private pressure(): void {
    const waiting = this.pending.length;
    if (!this.paused && waiting > MAX_WAITING_CHARS) {
      this.paused = true;
      this.onPressure(true);
    } else if (this.paused && waiting < MAX_WAITING_CHARS / 2) {
      this.paused = false;
      this.onPressure(false);
    }
  }
}

// Each workspace's copy on this runner: one per incarnation, brought to the job's version before its command and synced back after it.
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyedLock } from '../../core/keyed-lock.ts';
import type { LeasedJob } from '../../contract/runner-protocol.ts';
import type { RunnerClient } from '../runner-client.ts';
import type { BlobFiles } from './blob-files.ts';
import { removeTree } from './confined-tree.ts';
import { FileWriters } from './file-writers.ts';
import type { OverlayMount } from './overlay.ts';
import type { RunnerSandbox } from './runner-sandbox.ts';
import { sendChanges } from './sync-back.ts';
import { WorkspaceMirror } from './workspace-mirror.ts';

export class WorkspaceCopies {
  /** Threads that create the files of workspace copies, shared by all copies. */
  private readonly writers = new FileWriters();
  /** Copies whose entries are all the commands' user's (written by this runner, or handed over once). */
  private readonly handedOver = new WeakSet<WorkspaceMirror>();
  /** Each workspace's copy, of the incarnation its last job named. */
  private readonly mirrors = new Map<string, { incarnation: string; mirror: WorkspaceMirror }>();
  /** Materialise and sync of one workspace copy take turns; commands themselves run side by side. */
  private readonly workspaceLock = new KeyedLock();
  /** Commands running on each workspace copy bound in place (not over an overlay): they change it unseen while they run. */
  private readonly directWriters = new Map<string, number>();

  constructor(
    private readonly client: RunnerClient,
    /** The runner's data directory: copies live under its `workspaces/`. */
    private readonly dataDir: string,
    private readonly blobs: BlobFiles,
    private readonly sandbox: RunnerSandbox,
  ) {}

  /** The copy of the job's workspace at the version the job names, materialised first when it is not. */
  prepare(job: LeasedJob): Promise<WorkspaceMirror> {
    return this.workspaceLock.run(job.workspace, async () => {
      const mirror = await this.mirror(job);
      if (mirror.version !== undefined && mirror.version === job.workspaceVersion) return mirror;
      const manifest = await this.client.manifest(job.workspace);
      mirror.version = undefined;
      // Materialising keeps the copy exact (it writes only what it records), or makes it so when
      // it starts from nothing, unless it fails half way.
      const fresh = await mirror.holdsNothing();
      const exact = mirror.exact || fresh;
      mirror.exact = false;
      await mirror.materialise(
        manifest.entries,
        (hash) => this.client.blob(job.workspace, hash),
        (hashes) => this.client.blobs(job.workspace, hashes),
      );
      mirror.exact = exact && !mirror.hasUnwrittenLinks() && !this.directWriters.get(job.workspace);
      // A copy this runner did not write from nothing may hold what an earlier runner left root's: handed over once.
      if (!fresh && !this.handedOver.has(mirror)) await this.sandbox.handOver(mirror.root);
      this.handedOver.add(mirror);
      mirror.version = manifest.version;
      return mirror;
    });
  }

  /** A command starts bound in place on the copy: until its changes are synced, the copy holds more than is known. */
  bindInPlace(job: LeasedJob, mirror: WorkspaceMirror): void {
    mirror.exact = false;
    this.directWriters.set(job.workspace, (this.directWriters.get(job.workspace) ?? 0) + 1);
  }

  /** The command bound in place has ended (its changes synced, or given up). */
  unbind(job: LeasedJob): void {
    this.directWriters.set(job.workspace, this.directWriters.get(job.workspace)! - 1);
  }

  /** Sends what the command changed in the copy (or in its overlay's upper layer), under the workspace's lock. */
  syncBack(
    job: LeasedJob,
    mirror: WorkspaceMirror,
    overlay?: OverlayMount,
  ): Promise<{ conflicts: string[]; error?: string }> {
    return this.workspaceLock.run(job.workspace, () => this.sync(job, mirror, overlay));
  }

  /** Stops the writer threads. */
  close(): Promise<void> {
    return this.writers.close();
  }

  /**
   * The copy of the job's workspace incarnation, under `workspaces/<name>/<incarnation>`. Copies of
   * other incarnations of the name (the workspace was deleted and made again) are removed first,
   * so the new one never sees their files; the caller holds the name's lock.
   */
  private async mirror(job: LeasedJob): Promise<WorkspaceMirror> {
    const incarnation = job.incarnation ?? 'gone';
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(incarnation))
      throw new Error(`the server named an invalid incarnation ${JSON.stringify(incarnation)}`);
    const current = this.mirrors.get(job.workspace);
    if (current?.incarnation === incarnation) return current.mirror;
    const parent = join(this.dataDir, 'workspaces', job.workspace);
    await mkdir(parent, { recursive: true });
    // A command of the old incarnation may still be ending in its copy: removed without following its links.
    for (const name of await readdir(parent)) if (name !== incarnation) removeTree(join(parent, name));
    const mirror = new WorkspaceMirror(join(parent, incarnation), this.blobs, this.writers);
    // What it writes is the commands' user's from the start (when the runner is root), so a copy written from nothing needs no ownership walk.
    mirror.owner = this.sandbox.user;
    this.mirrors.set(job.workspace, { incarnation, mirror });
    return mirror;
  }

  private async sync(
    job: LeasedJob,
    mirror: WorkspaceMirror,
    overlay?: OverlayMount,
  ): Promise<{ conflicts: string[]; error?: string }> {
    const { changes, skipped } = overlay
      ? await mirror.takeUpper(overlay.support, overlay.layers)
      : await mirror.scan();
    // The copy holds exactly what is known once all it held was seen and committed, and no command bound in place is changing it.
    const alone = (this.directWriters.get(job.workspace) ?? 0) === (overlay ? 0 : 1);
    if (changes.length === 0 && skipped.length === 0) {
      mirror.exact = alone;
      return { conflicts: [] };
    }
    const before = mirror.version;
    const { answer, tooLarge, failed, sent } = await sendChanges(this.client, job, changes);
    // Bring the copy's record up to what the server now holds; conflicted, refused and unsent paths
    // are forgotten, so the next materialise puts the server's side of them back on disk.
    const unsent = [...tooLarge, ...failed].map((entry) => entry.path);
    mirror.forget([...answer.conflicts, ...answer.skipped.map((entry) => entry.path), ...answer.committed, ...unsent]);
    await mirror.accept(answer.entries);
    // A file too large to keep is known as one the server lacks, so the next materialise removes it
    // (or puts the server's version back) rather than each later scan finding it again.
    await mirror.accept(tooLarge.map(({ path }) => ({ path, type: 'file', blob: null, target: null, version: 0 })));
    const conflicts = [...answer.conflicts, ...tooLarge.map((entry) => entry.path)];
    const refused = [
      ...skipped,
      ...answer.skipped,
      ...failed,
      ...tooLarge.map(({ path, size }) => ({
        path,
        reason: `${size} bytes, over the file limit of ${job.maxFileBytes} bytes (TOOLGATE_MAX_FILE_BYTES), so not kept`,
      })),
    ];
    // The copy equals the new version only when our commit was the only one since it was made.
    const clean =
      conflicts.length === 0 && refused.length === 0 && before !== undefined && answer.version === before + 1;
    mirror.version = clean ? (answer.version ?? undefined) : undefined;
    mirror.exact = alone && conflicts.length === 0 && refused.length === 0 && answer.committed.length === sent;
    return {
      conflicts,
      ...(refused.length > 0
        ? { error: `not synced: ${refused.map((entry) => `${entry.path} (${entry.reason})`).join('; ')}` }
        : {}),
    };
  }
}

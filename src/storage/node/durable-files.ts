// Writes files durably off the event loop, many at once: each is written to a temp file beside
// it, made durable, then renamed over its name, by threads that make the system calls one after
// another. Files asked for together go to a thread as one batch, which writes them all before it
// syncs any. A batch of a few files syncs each with fdatasync (on a journalling filesystem the
// first sync commits much of the others' work too). A batch of many (an archive unpacked, a
// runner's files synced back) makes one syncfs of each filesystem the files lie on, by coreutils'
// `sync --file-system`: an fdatasync costs about half a millisecond here, so 5,000 small files
// took 2–3 s one by one and take one 15–40 ms sync together. syncfs flushes everything waiting on
// that filesystem, so such a batch may wait for other writers' data as well; when the command is
// missing or fails, the batch falls back to one fdatasync per file, which reports each file's error.
import { Worker } from 'node:worker_threads';
import { WORKER_CODE } from './durable-files-thread.ts';

/** One file to replace durably: `bytes` go to `temp` (which must not exist), then `temp` is renamed to `file`. */
export interface DurableFile {
  dir: string;
  temp: string;
  file: string;
  bytes: Uint8Array;
}

interface Batch {
  id: number;
  dirMode: number;
  fileMode: number;
  /** The command run as `<command> --file-system -- <dir>...` to sync a batch of at least `syncFileSystemsFrom` files. */
  syncCommand: string;
  syncFileSystemsFrom: number;
  /** Only the fields of DurableFile: the message carries whatever the objects hold. */
  files: readonly DurableFile[];
  /** Sync the directories once the files are renamed, so their names are durable too. */
  syncDirectories: boolean;
  /** Set to 1 (every file written) or 2 and notified before the thread answers (see writeNamed). */
  cell: Int32Array | undefined;
}

export interface DurableFilesOptions {
  /** Threads writing side by side; each takes whole batches. */
  width?: number;
  /** The smallest batch synced by filesystem rather than by file (see the top of this file). */
  syncFileSystemsFrom?: number;
  /** coreutils' sync, found on PATH unless given. */
  syncCommand?: string;
}

/** Below this many files a batch syncs file by file, spread over the threads; from it, by filesystem. */
const SYNC_FILE_SYSTEMS_FROM = 128;

/** Per file: nothing when it was written, or why not (the temp file is removed then). */
type Outcome = { code: string | undefined; message: string } | null;

export class DurableFiles {
  private workers: Worker[] | undefined;
  private next = 0;
  private lastId = 0;
  /** Files asked for since the last hand-over, sent together at the next turn of the event loop. */
  private queued: { file: DurableFile; resolve: () => void; reject: (error: Error) => void }[] = [];
  private readonly waiting = new Map<number, { settle: (outcomes: Outcome[]) => void; fail: (error: Error) => void }>();
  private broken: Error | undefined;

  private readonly width: number;
  private readonly syncFileSystemsFrom: number;
  private readonly syncCommand: string;

  constructor(
    private readonly modes: { dir: number; file: number },
    options: DurableFilesOptions = {},
  ) {
    this.width = options.width ?? 4;
    this.syncFileSystemsFrom = options.syncFileSystemsFrom ?? SYNC_FILE_SYSTEMS_FROM;
    this.syncCommand = options.syncCommand ?? 'sync';
  }

  /** Whether the threads can take work: false once one has failed to start or died (callers then write themselves). */
  get usable(): boolean {
    return this.broken === undefined;
  }

  /** Resolves once `file` holds `bytes` durably; rejects with the system call's error (its `code` kept). */
  write(file: DurableFile): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.queued.push({ file, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.handOver());
    });
  }

  /**
   * Resolves once every file holds its bytes durably; rejects with the first file's error (the
   * others may be written then). A set of at least `syncFileSystemsFrom` files goes to one thread
   * at once as one batch with one sync, not at the next turn: its caller may go on preparing the
   * next set while this one is written. A smaller set is written as that many `write`s.
   * `moved`, when given, is the one buffer every file's bytes lie in, which the caller gives up:
   * it is moved to the thread rather than copied (it is unusable here afterwards).
   */
  async writeMany(files: readonly DurableFile[], moved?: ArrayBuffer): Promise<void> {
    if (files.length < this.syncFileSystemsFrom) {
      await Promise.all(files.map((file) => this.write(file)));
      return;
    }
    if (this.broken) throw this.broken;
    const outcomes = await new Promise<Outcome[]>((settle, fail) =>
      this.post(files, { settle, fail }, this.start(), moved),
    );
    const failed = outcomes.find((outcome) => outcome !== null && outcome !== undefined);
    if (failed) throw Object.assign(new Error(failed.message), { code: failed.code });
  }

  /**
   * Resolves once `file` holds its bytes durably under its name (its directory synced after the
   * rename). It goes at once to the thread with the fewest batches in hand: a caller waits for it
   * (a journal of the object store), so it should not queue behind a large batch nobody waits for.
   * `cell`, an Int32Array over shared memory, is set by the thread as it answers: 1 once the file
   * is durable, 2 when it failed, then notified (a caller may wait for it without its event loop).
   */
  writeNamed(file: DurableFile, cell?: Int32Array): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    const workers = this.start();
    const idlest = workers.reduce((best, worker) =>
      (this.batches.get(worker) ?? 0) < (this.batches.get(best) ?? 0) ? worker : best,
    );
    return new Promise((resolve, reject) =>
      this.post(
        [file],
        {
          settle: ([outcome]) =>
            outcome === null || outcome === undefined
              ? resolve()
              : reject(Object.assign(new Error(outcome.message), { code: outcome.code })),
          fail: reject,
        },
        [idlest],
        undefined,
        true,
        cell,
      ),
    );
  }

  async close(): Promise<void> {
    const workers = this.workers ?? [];
    this.workers = undefined;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  /**
   * Spreads what was asked for over the threads, a batch each, the files of a batch in the order
   * asked: a few files over every thread (their fdatasyncs side by side), many files in batches
   * of at least `syncFileSystemsFrom` each (one syncfs per batch).
   */
  private handOver(): void {
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    const workers = this.start();
    const batches =
      queued.length < this.syncFileSystemsFrom
        ? workers.length
        : Math.min(workers.length, Math.floor(queued.length / this.syncFileSystemsFrom));
    const share = Math.ceil(queued.length / batches);
    for (let start = 0; start < queued.length; start += share) {
      const part = queued.slice(start, start + share);
      this.post(
        part.map(({ file }) => file),
        {
          settle: (outcomes) =>
            part.forEach((item, index) => {
              const outcome = outcomes[index];
              if (outcome === null || outcome === undefined) item.resolve();
              else item.reject(Object.assign(new Error(outcome.message), { code: outcome.code }));
            }),
          fail: (error) => part.forEach((item) => item.reject(error)),
        },
        workers,
      );
    }
  }

  /** Sends one batch to the next thread; `waiter` hears of its outcomes, file by file, or of the thread's failure. */
  private post(
    files: readonly DurableFile[],
    waiter: { settle: (outcomes: Outcome[]) => void; fail: (error: Error) => void },
    workers: Worker[],
    moved?: ArrayBuffer,
    syncDirectories = false,
    cell?: Int32Array,
  ): void {
    const id = ++this.lastId;
    this.waiting.set(id, waiter);
    const batch: Batch = {
      id,
      dirMode: this.modes.dir,
      fileMode: this.modes.file,
      syncCommand: this.syncCommand,
      syncFileSystemsFrom: this.syncFileSystemsFrom,
      files,
      syncDirectories,
      cell,
    };
    // The bytes are copied to the thread (the caller's buffers may be views of shared memory) but for a buffer given up.
    const worker = workers[this.next++ % workers.length]!;
    this.busy(worker, +1);
    worker.postMessage(batch, moved === undefined ? [] : [moved]);
  }

  /** Batches each thread has in hand: a thread holding any keeps the process alive until it answers. */
  private readonly batches = new Map<Worker, number>();

  private busy(worker: Worker, change: 1 | -1): void {
    const count = (this.batches.get(worker) ?? 0) + change;
    this.batches.set(worker, count);
    if (count === 1 && change === 1) worker.ref();
    if (count === 0) worker.unref();
  }

  private start(): Worker[] {
    if (this.workers) return this.workers;
    this.workers = Array.from({ length: this.width }, () => {
      // No execArgv: the thread runs plain JavaScript and needs none of the parent's loaders.
      const worker = new Worker(WORKER_CODE, { eval: true, execArgv: [] });
      worker.on('message', ({ id, outcomes }: { id: number; outcomes: Outcome[] }) => {
        this.busy(worker, -1);
        const waiter = this.waiting.get(id);
        this.waiting.delete(id);
        waiter?.settle(outcomes);
      });
      const fail = (error: Error) => {
        this.broken ??= Object.assign(new Error(`a file-writing thread failed: ${error.message}`), { code: 'EIO' });
        for (const waiter of this.waiting.values()) waiter.fail(this.broken);
        this.waiting.clear();
      };
      worker.on('error', fail);
      // Idle threads do not keep the process alive; one with work does (see busy). Unreferenced
      // only once its listeners are on: adding a message listener references it again.
      worker.unref();
      worker.on('exit', (code) => {
        if (this.workers?.includes(worker)) fail(new Error(`it exited with code ${code}`));
      });
      return worker;
    });
    return this.workers;
  }
}

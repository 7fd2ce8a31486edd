// Writes files durably off the event loop, many at once: each is written to a temp file beside
// it, made durable with fdatasync, then renamed over its name, by threads that make the system
// calls one after another. Files asked for together go to a thread as one batch, which writes
// them all before it syncs any: on a journalling filesystem the first sync then commits the
// others' data too, so concurrent writers share the cost of a sync instead of each paying it.
import { Worker } from 'node:worker_threads';

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
  files: { dir: string; temp: string; file: string; bytes: Uint8Array }[];
}

/** Per file: nothing when it was written, or why not (the temp file is removed then). */
type Outcome = { code: string | undefined; message: string } | null;

/**
 * The thread's code, plain JavaScript evaluated in the worker. A missing directory is made (and
 * made again if a concurrent delete pruned it between mkdir and open, as the async path did).
 */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const failure = (error) => ({ code: error.code, message: error.message });
parentPort.on('message', ({ id, dirMode, fileMode, files }) => {
  const fds = [];
  const outcomes = files.map(() => null);
  // Everything is written before anything is synced: the syncs after the first find little left to do.
  files.forEach((file, index) => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        fs.mkdirSync(file.dir, { recursive: true, mode: dirMode });
        const fd = fs.openSync(file.temp, 'wx', fileMode);
        fds[index] = fd;
        let offset = 0;
        while (offset < file.bytes.byteLength) offset += fs.writeSync(fd, file.bytes, offset);
        return;
      } catch (error) {
        if (error.code === 'ENOENT' && attempt < 5 && fds[index] === undefined) continue;
        outcomes[index] = failure(error);
        return;
      }
    }
  });
  files.forEach((file, index) => {
    const fd = fds[index];
    if (fd === undefined) return;
    try {
      if (outcomes[index] === null) fs.fdatasyncSync(fd);
    } catch (error) {
      outcomes[index] = failure(error);
    }
    try {
      fs.closeSync(fd);
    } catch (error) {
      if (outcomes[index] === null) outcomes[index] = failure(error);
    }
    try {
      if (outcomes[index] === null) fs.renameSync(file.temp, file.file);
    } catch (error) {
      outcomes[index] = failure(error);
    }
    if (outcomes[index] !== null) {
      try {
        fs.unlinkSync(file.temp);
      } catch {}
    }
  });
  parentPort.postMessage({ id, outcomes });
});
`;

export class DurableFiles {
  private workers: Worker[] | undefined;
  private next = 0;
  private lastId = 0;
  /** Files asked for since the last hand-over, sent together at the next turn of the event loop. */
  private queued: { file: DurableFile; resolve: () => void; reject: (error: Error) => void }[] = [];
  private readonly waiting = new Map<number, { settle: (outcomes: Outcome[]) => void; fail: (error: Error) => void }>();
  private broken: Error | undefined;

  constructor(
    private readonly modes: { dir: number; file: number },
    /** Threads writing side by side; each takes whole batches. */
    private readonly width = 4,
  ) {}

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

  async close(): Promise<void> {
    const workers = this.workers ?? [];
    this.workers = undefined;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  /** Spreads what was asked for over the threads, a batch each, the files of a batch in the order asked. */
  private handOver(): void {
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    const workers = this.start();
    const share = Math.ceil(queued.length / workers.length);
    for (let start = 0; start < queued.length; start += share) {
      const part = queued.slice(start, start + share);
      const id = ++this.lastId;
      this.waiting.set(id, {
        settle: (outcomes) =>
          part.forEach((item, index) => {
            const outcome = outcomes[index];
            if (outcome === null || outcome === undefined) item.resolve();
            else item.reject(Object.assign(new Error(outcome.message), { code: outcome.code }));
          }),
        fail: (error) => part.forEach((item) => item.reject(error)),
      });
      const batch: Batch = {
        id,
        dirMode: this.modes.dir,
        fileMode: this.modes.file,
        files: part.map(({ file }) => ({ dir: file.dir, temp: file.temp, file: file.file, bytes: file.bytes })),
      };
      // The bytes are copied to the thread: the caller's buffers may be views of shared memory.
      const worker = workers[this.next++ % workers.length]!;
      this.busy(worker, +1);
      worker.postMessage(batch);
    }
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

// Worker threads that create a workspace copy's files: a cold copy of thousands of small files is
// bound by the system calls that create them, which threads run side by side, off the event loop.
import { Worker } from 'node:worker_threads';

/** One file to create at `host`, an absolute path that must not exist yet: from bytes, or copied from a cache file. */
export type FileToCreate = { host: string; bytes: Uint8Array } | { host: string; source: string };

/** Per file, in order: its stamp (see mirror-disk.ts `stampFrom`), or why it could not be created. */
export type CreateResult = { stamp: string } | { code: string | undefined; message: string };

interface Request {
  id: number;
  /** Who owns the files created (the commands' user, when the runner is root). */
  owner?: { uid: number; gid: number };
  buffers: ArrayBuffer[];
  files: ({ host: string; buffer: number; offset: number; length: number } | { host: string; source: string })[];
}

/**
 * The thread's code, plain JavaScript evaluated in the worker (no TypeScript loader needed there).
 * A file is opened with O_EXCL (`wx`) or copied with COPYFILE_EXCL: a link planted at its path is
 * never followed; the caller handles EEXIST. The stamp is computed exactly as `stampFrom` does.
 */
const WORKER_CODE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const stamp = (stat) => stat.size + ':' + stat.mtimeMs + ':' + stat.ino;
parentPort.on('message', ({ id, owner, buffers, files }) => {
  const results = [];
  for (const file of files) {
    try {
      if (file.source !== undefined) {
        fs.copyFileSync(file.source, file.host, fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE);
        if (owner) fs.lchownSync(file.host, owner.uid, owner.gid);
        results.push({ stamp: stamp(fs.lstatSync(file.host)) });
        continue;
      }
      const fd = fs.openSync(file.host, 'wx');
      try {
        if (owner) fs.fchownSync(fd, owner.uid, owner.gid);
        fs.writeFileSync(fd, new Uint8Array(buffers[file.buffer], file.offset, file.length));
        results.push({ stamp: stamp(fs.fstatSync(fd)) });
      } finally {
        fs.closeSync(fd);
      }
    } catch (error) {
      results.push({ code: error.code, message: error.message });
    }
  }
  parentPort.postMessage({ id, results });
});
`;

/** Files handed to one thread in one message: enough to amortise the message, few enough to spread a batch. */
const FILES_PER_MESSAGE = 128;

export class FileWriters {
  private workers: Worker[] | undefined;
  private next = 0;
  private lastId = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (results: CreateResult[]) => void; reject: (error: Error) => void }
  >();
  private broken: Error | undefined;

  constructor(private readonly width = 2) {}

  /**
   * Creates the files, spread over the threads, and answers a result per file in order. A thread
   * that dies fails what it had, and the pool refuses further work (the caller then writes itself).
   */
  async create(files: readonly FileToCreate[], owner?: { uid: number; gid: number }): Promise<CreateResult[]> {
    const answers: Promise<CreateResult[]>[] = [];
    for (let start = 0; start < files.length; start += FILES_PER_MESSAGE)
      answers.push(this.send(files.slice(start, start + FILES_PER_MESSAGE), owner));
    return (await Promise.all(answers)).flat();
  }

  /** Whether the threads can take work: false once one has failed to start or died. */
  get usable(): boolean {
    return this.broken === undefined;
  }

  async close(): Promise<void> {
    const workers = this.workers ?? [];
    this.workers = undefined;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private send(
    files: readonly FileToCreate[],
    owner: { uid: number; gid: number } | undefined,
  ): Promise<CreateResult[]> {
    if (this.broken) return Promise.reject(this.broken);
    const workers = this.start();
    const worker = workers[this.next++ % workers.length]!;
    // The bytes of many files are views of one batch answer: of each backing buffer, the range
    // these files use goes once (copied: the cache still holds views of it), and files name it by index.
    const ranges = new Map<ArrayBufferLike, { start: number; end: number; index: number }>();
    for (const file of files) {
      if ('source' in file) continue;
      const { buffer, byteOffset, byteLength } = file.bytes;
      const range = ranges.get(buffer);
      if (range) {
        range.start = Math.min(range.start, byteOffset);
        range.end = Math.max(range.end, byteOffset + byteLength);
      } else {
        ranges.set(buffer, { start: byteOffset, end: byteOffset + byteLength, index: ranges.size });
      }
    }
    const buffers = [...ranges].map(([buffer, range]) => (buffer as ArrayBuffer).slice(range.start, range.end));
    const request: Request = {
      id: ++this.lastId,
      owner,
      buffers,
      files: files.map((file) => {
        if ('source' in file) return { host: file.host, source: file.source };
        const range = ranges.get(file.bytes.buffer)!;
        return {
          host: file.host,
          buffer: range.index,
          offset: file.bytes.byteOffset - range.start,
          length: file.bytes.byteLength,
        };
      }),
    };
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject });
      // The copied ranges move to the thread rather than being copied again.
      this.busy(worker, +1);
      worker.postMessage(request, buffers);
    });
  }

  /** Requests each thread has in hand: a thread holding any keeps the process alive until it answers. */
  private readonly requests = new Map<Worker, number>();

  private busy(worker: Worker, change: 1 | -1): void {
    const count = (this.requests.get(worker) ?? 0) + change;
    this.requests.set(worker, count);
    if (count === 1 && change === 1) worker.ref();
    if (count === 0) worker.unref();
  }

  private start(): Worker[] {
    if (this.workers) return this.workers;
    // No execArgv: the thread runs plain JavaScript and needs none of the parent's loaders.
    this.workers = Array.from({ length: this.width }, () => {
      const worker = new Worker(WORKER_CODE, { eval: true, execArgv: [] });
      worker.on('message', ({ id, results }: { id: number; results: CreateResult[] }) => {
        this.busy(worker, -1);
        const waiter = this.waiting.get(id);
        this.waiting.delete(id);
        waiter?.resolve(results);
      });
      const fail = (error: Error) => {
        this.broken ??= new Error(`a file-writing thread failed: ${error.message}`);
        for (const waiter of this.waiting.values()) waiter.reject(this.broken);
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

// grep's search threads on the Node home: a file whose search is one long re2js call (a very long
// line) is searched on a worker thread, so that the event loop all tenants share keeps turning.
import { Worker } from 'node:worker_threads';
import { INTERNAL_MESSAGE, ToolError } from '../core/errors.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { letEventLoopRun } from '../core/work-budget.ts';
import type { FileMatches, SearchThreads, ThreadSearch } from '../tools/search/text-search.ts';
import type { SearchThreadAnswer, SearchThreadJob } from './search-thread.ts';

/** The thread's program: a JavaScript entry that loads search-thread.ts (see its header). */
const ENTRY = new URL('./search-thread-entry.js', import.meta.url);

/** A file's bytes are copied for its thread this much at a time: 32 MiB at once holds the event loop tens of milliseconds. */
const COPY_SLICE_BYTES = 4 * 1024 * 1024;

export interface SearchThreadPoolOptions {
  /** Threads searching at once; more searches wait their turn. */
  size?: number;
  /** The threads' program, when not search-thread-entry.js (tests give one that can be made to end). */
  program?: URL;
  log?: Log;
}

interface Job {
  bytes: Uint8Array;
  request: ThreadSearch;
  resolve: (matches: FileMatches | undefined) => void;
  reject: (error: ToolError) => void;
}

/**
 * Threads started on first use, one search each at a time, the searches past them queued in order.
 * A thread that dies fails its search with `unavailable` and is replaced by the next search.
 */
export class SearchThreadPool implements SearchThreads {
  private readonly size: number;
  private readonly log: Log;
  private readonly idle: Worker[] = [];
  /** Each thread with a search in hand, and that search. */
  private readonly running = new Map<Worker, Job>();
  private readonly queued: Job[] = [];
  private closed = false;

  constructor(private readonly options: SearchThreadPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? 1);
    this.log = options.log ?? consoleLog;
  }

  search(bytes: Uint8Array, request: ThreadSearch): Promise<FileMatches | undefined> {
    if (this.closed) return Promise.reject(closing());
    return new Promise((resolve, reject) => {
      this.queued.push({ bytes, request, resolve, reject });
      this.dispatch();
    });
  }

  /** Fails what is queued or running with `unavailable` and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of [...this.queued.splice(0), ...this.running.values()]) job.reject(closing());
    const threads = [...this.idle.splice(0), ...this.running.keys()];
    this.running.clear();
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  private dispatch(): void {
    while (this.queued.length > 0) {
      const thread = this.idle.pop() ?? (this.running.size < this.size ? this.start() : undefined);
      if (thread === undefined) return;
      const job = this.queued.shift()!;
      this.running.set(thread, job);
      // A thread with a search in hand keeps the process alive until it answers.
      thread.ref();
      void this.send(thread, job);
    }
  }

  /** Sends a copy of exactly the file's bytes, moved to the thread: the array itself stays the blob cache's. */
  private async send(thread: Worker, job: Job): Promise<void> {
    const bytes = new Uint8Array(job.bytes.length);
    for (let at = 0; at < bytes.length; at += COPY_SLICE_BYTES) {
      if (at > 0) await letEventLoopRun();
      bytes.set(job.bytes.subarray(at, at + COPY_SLICE_BYTES), at);
    }
    // The thread died or the pool closed meanwhile: the job has had its answer.
    if (this.running.get(thread) !== job) return;
    const message: SearchThreadJob = { bytes, request: job.request };
    thread.postMessage(message, [bytes.buffer]);
  }

  private start(): Worker {
    // No execArgv: the entry loads TypeScript itself and needs none of the parent's loaders.
    const thread = new Worker(this.options.program ?? ENTRY, { execArgv: [] });
    thread.on('message', (answer: SearchThreadAnswer) => this.answered(thread, answer));
    thread.on('messageerror', (error) => this.lost(thread, error));
    thread.on('error', (error) => this.lost(thread, error));
    thread.on('exit', (code) => this.lost(thread, new Error(`the search thread exited with code ${code}`)));
    // Unreferenced only once its listeners are on: adding a message listener references it again.
    thread.unref();
    return thread;
  }

  private answered(thread: Worker, answer: SearchThreadAnswer): void {
    const job = this.running.get(thread);
    if (job === undefined) return;
    this.running.delete(thread);
    this.idle.push(thread);
    thread.unref();
    if ('matches' in answer) {
      job.resolve(answer.matches);
    } else if ('error' in answer) {
      job.reject(new ToolError(answer.error.code, answer.error.message, answer.error.details));
    } else {
      this.log(`a search thread failed: ${answer.failure}`);
      job.reject(new ToolError('internal', INTERNAL_MESSAGE));
    }
    this.dispatch();
  }

  /** A thread that died (or sent what cannot be read): its search fails, and a new thread serves the queue. */
  private lost(thread: Worker, cause: unknown): void {
    const job = this.running.get(thread);
    this.running.delete(thread);
    const at = this.idle.indexOf(thread);
    if (at !== -1) this.idle.splice(at, 1);
    if (this.closed) return;
    if (job !== undefined || at !== -1) {
      this.log('a search thread stopped', cause);
      void thread.terminate();
    }
    job?.reject(
      new ToolError(
        'unavailable',
        'The search of a file with a very long line stopped before it answered (its thread ended); retry the call.',
      ),
    );
    this.dispatch();
  }
}

function closing(): ToolError {
  return new ToolError('unavailable', 'The server is closing, so the search did not finish; retry the call.');
}

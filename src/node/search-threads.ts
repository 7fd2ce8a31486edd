// grep's search threads on the Node home: a file whose search is one long re2js call (a very long
// line) is searched on a worker thread, so that the event loop all tenants share keeps turning.
import { INTERNAL_MESSAGE, ToolError } from '../core/errors.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { letEventLoopRun } from '../core/work-budget.ts';
import type { FileMatches, SearchThreads, ThreadSearch } from '../tools/search/text-search.ts';
import type { SearchThreadAnswer, SearchThreadJob } from './search-thread.ts';
import { ThreadPool, type PoolThread } from './thread-pool.ts';

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
  private readonly log: Log;
  private readonly pool: ThreadPool<Job, SearchThreadAnswer>;

  constructor(options: SearchThreadPoolOptions = {}) {
    this.log = options.log ?? consoleLog;
    this.pool = new ThreadPool({
      program: options.program ?? ENTRY,
      size: Math.max(1, options.size ?? 1),
      jobsPerThread: 1,
      name: 'search',
      log: this.log,
      kept: () => undefined,
      received: (thread, answer) => this.answered(thread, answer),
      lostError: () =>
        new ToolError(
          'unavailable',
          'The search of a file with a very long line stopped before it answered (its thread ended); retry the call.',
        ),
      closingError: closing,
    });
  }

  search(bytes: Uint8Array, request: ThreadSearch): Promise<FileMatches | undefined> {
    return new Promise((resolve, reject) => {
      const job: Job = { bytes, request, resolve, reject };
      this.pool.add(job, (thread, id) => void this.send(thread, id, job));
    });
  }

  /** Fails what is queued or running with `unavailable` and stops the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** Sends a copy of exactly the file's bytes, moved to the thread: the array itself stays the blob cache's. */
  private async send(thread: PoolThread<Job>, id: number, job: Job): Promise<void> {
    const bytes = new Uint8Array(job.bytes.length);
    for (let at = 0; at < bytes.length; at += COPY_SLICE_BYTES) {
      if (at > 0) await letEventLoopRun();
      bytes.set(job.bytes.subarray(at, at + COPY_SLICE_BYTES), at);
    }
    // The thread died or the pool closed meanwhile: the job has had its answer.
    if (thread.jobs.get(id) !== job) return;
    const message: SearchThreadJob = { bytes, request: job.request };
    thread.worker.postMessage(message, [bytes.buffer]);
  }

  /** A thread holds one search at a time, so its answer is that search's. */
  private answered(thread: PoolThread<Job>, answer: SearchThreadAnswer): void {
    const [id] = thread.jobs.keys();
    const job = id === undefined ? undefined : this.pool.settle(thread, id);
    if (job === undefined) return;
    if ('matches' in answer) {
      job.resolve(answer.matches);
    } else if ('error' in answer) {
      job.reject(new ToolError(answer.error.code, answer.error.message, answer.error.details));
    } else {
      this.log(`a search thread failed: ${answer.failure}`);
      job.reject(new ToolError('internal', INTERNAL_MESSAGE));
    }
  }
}

function closing(): ToolError {
  return new ToolError('unavailable', 'The server is closing, so the search did not finish; retry the call.');
}

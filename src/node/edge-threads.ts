// The edge engine's threads on the Node home: bash command lines are read and run by the
// interpreter on worker threads, so that a script's work (just-bash runs it in JavaScript, a loop
// for seconds) never holds the event loop all tenants share. The threads start on first use.
import { INTERNAL_MESSAGE, ToolError } from '../core/errors.ts';
import { consoleLog, type Log } from '../core/log.ts';
import type { EdgeSource } from '../tools/edge-bash/edge-copy.ts';
import type { EdgeEngine, EdgeInterpretation, EdgeRun } from '../tools/edge-bash/edge-interpreter.ts';
import type { EdgeThreadMessage, EdgeThreadRequest } from './edge-thread.ts';
import { KEPT_LISTING_ENTRIES, KeptListings, listingWeight } from './edge-thread-contents.ts';
import { ThreadPool, type PoolThread } from './thread-pool.ts';

/** The threads' program: a JavaScript entry that loads edge-thread.ts (see its header). */
const ENTRY = new URL('./edge-thread-entry.js', import.meta.url);

/**
 * How long past its timeout a command's thread may stay silent before it is stopped: the
 * interpreter checks its time between commands, so only a single command that runs on (a sed
 * over a huge file) outlasts its timeout by more.
 */
const STOP_GRACE_MS = 5_000;

export interface EdgeThreadPoolOptions {
  /** Threads at most; each takes several commands at once, the least busy the next one. */
  size?: number;
  /** The threads' program, when not edge-thread-entry.js. */
  program?: URL;
  log?: Log;
}

interface Job {
  resolve: (answer: unknown) => void;
  reject: (error: ToolError) => void;
  /** For an interpretation: where its files are read from. */
  source?: EdgeSource;
  timer?: ReturnType<typeof setTimeout>;
}

/** Beside each thread, the listings sent to it (their sizes), as it keeps them: those it is not sent again. */
type Thread = PoolThread<Job, KeptListings<number>>;

export class EdgeThreadPool implements EdgeEngine {
  private readonly log: Log;
  private readonly pool: ThreadPool<Job, EdgeThreadMessage, KeptListings<number>>;

  constructor(options: EdgeThreadPoolOptions = {}) {
    this.log = options.log ?? consoleLog;
    this.pool = new ThreadPool({
      program: options.program ?? ENTRY,
      size: Math.max(1, options.size ?? 2),
      // Each thread takes several commands at once, the least busy the next one.
      jobsPerThread: Number.POSITIVE_INFINITY,
      name: 'edge',
      log: this.log,
      kept: () => new KeptListings(KEPT_LISTING_ENTRIES),
      received: (thread, message) => this.received(thread, message),
      lostError: () =>
        new ToolError(
          'unavailable',
          'The edge engine stopped before the command answered (its thread ended); retry the call.',
        ),
      closingError: closing,
    });
  }

  interpret(source: EdgeSource, run: EdgeRun): Promise<EdgeInterpretation> {
    const { scope, listing } = source;
    return this.ask<EdgeInterpretation>(
      (id, thread) => {
        // A listing the thread was sent is not sent again (it asks for it if it has dropped it), nor
        // one the command may not need: where the engine is still to be decided, the thread asks for
        // it once it runs the command, and a command it gives to a runner is never listed.
        if (thread.kept.get(listing) !== undefined || run.requested !== undefined)
          return { kind: 'interpret', id, scope, listing, run };
        const { entries } = source;
        thread.kept.keep(listing, entries.length, listingWeight(entries.length));
        return { kind: 'interpret', id, entries, scope, listing, run };
      },
      {
        source,
        stopAfterMs: run.timeoutMs + STOP_GRACE_MS,
      },
    );
  }

  /** Fails every command in hand with `unavailable` and stops the threads. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private ask<Answer>(
    request: (id: number, thread: Thread) => Exclude<EdgeThreadRequest, { kind: 'read' }>,
    options: { source?: EdgeSource; stopAfterMs?: number } = {},
  ): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const job: Job = { resolve: resolve as (answer: unknown) => void, reject, source: options.source };
      this.pool.add(job, (thread, id) => {
        if (options.stopAfterMs !== undefined)
          job.timer = setTimeout(() => this.stuck(thread, id), options.stopAfterMs);
        thread.worker.postMessage(request(id, thread));
      });
    });
  }

  private received(thread: Thread, message: EdgeThreadMessage): void {
    if (message.kind === 'read' || message.kind === 'read-many' || message.kind === 'read-listing') {
      void this.serveRead(thread, message);
      return;
    }
    const job = this.pool.settle(thread, message.id);
    if (job === undefined) return;
    if (message.kind === 'interpreted') job.resolve(message.interpretation);
    else if (message.kind === 'error')
      job.reject(new ToolError(message.error.code, message.error.message, message.error.details));
    else {
      this.log(`an edge thread failed: ${message.failure}`);
      job.reject(new ToolError('internal', INTERNAL_MESSAGE));
    }
  }

  /** Files a command reads, sent to its thread as copies (an array itself may be the blob cache's). */
  private async serveRead(
    thread: Thread,
    message: Extract<EdgeThreadMessage, { kind: 'read' | 'read-many' | 'read-listing' }>,
  ): Promise<void> {
    const source = thread.jobs.get(message.id)?.source;
    let answer: Extract<EdgeThreadRequest, { kind: 'read' }>;
    try {
      if (source === undefined) throw new Error('the command reading it has ended');
      if (message.kind === 'read-listing') {
        const { entries } = source;
        thread.kept.keep(source.listing, entries.length, listingWeight(entries.length));
        answer = { kind: 'read', readId: message.readId, entries };
        thread.worker.postMessage(answer);
        return;
      }
      if (message.kind === 'read-many') {
        const many = await Promise.all(
          message.entries.map(async (entry) => (await source.read(entry.path, entry)).slice()),
        );
        answer = { kind: 'read', readId: message.readId, bytes: many };
        thread.worker.postMessage(
          answer,
          many.map((bytes) => bytes.buffer as ArrayBuffer),
        );
        return;
      }
      const bytes = (await source.read(message.path, message.entry)).slice();
      answer = { kind: 'read', readId: message.readId, bytes };
      thread.worker.postMessage(answer, [bytes.buffer]);
    } catch (error) {
      answer = {
        kind: 'read',
        readId: message.readId,
        failure: error instanceof Error ? error.message : String(error),
      };
      thread.worker.postMessage(answer);
    }
  }

  /** A command that outran its timeout by the grace without a word: its thread is stopped, with what else it ran. */
  private stuck(thread: Thread, id: number): void {
    if (!thread.jobs.has(id)) return;
    this.log(`an edge thread ran a command ${STOP_GRACE_MS} ms past its timeout; stopping the thread`);
    this.pool
      .settle(thread, id)
      ?.reject(
        new ToolError(
          'timeout',
          'The command ran past its timeoutMs and was stopped; none of its changes were kept. Run it with engine "runner".',
        ),
      );
    this.pool.drop(
      thread,
      new ToolError('unavailable', 'The edge engine stopped while running the command; retry the call.'),
    );
  }
}

function closing(): ToolError {
  return new ToolError('unavailable', 'The server is closing, so the command did not finish; retry the call.');
}

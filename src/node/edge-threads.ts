// The edge engine's threads on the Node home: bash command lines are read and run by the
// interpreter on worker threads, so that a script's work (just-bash runs it in JavaScript, a loop
// for seconds) never holds the event loop all tenants share. The threads start on first use.
import { Worker } from 'node:worker_threads';
import type { BashEngine } from '../contract/tool-inputs.ts';
import { INTERNAL_MESSAGE, ToolError } from '../core/errors.ts';
import { consoleLog, type Log } from '../core/log.ts';
import type { EdgeSource } from '../tools/edge-bash/edge-copy.ts';
import type { EdgeEngine, EdgeInterpretation, EdgeRun } from '../tools/edge-bash/edge-interpreter.ts';
import type { WorkspaceFacts } from '../tools/edge-bash/edge-script.ts';
import type { EdgeThreadMessage, EdgeThreadRequest } from './edge-thread.ts';
import { KEPT_LISTING_ENTRIES, KeptListings } from './edge-thread-contents.ts';

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

interface Thread {
  worker: Worker;
  jobs: Map<number, Job>;
  /** The listings sent to it (their sizes), as it keeps them: those it is not sent again. */
  listings: KeptListings<number>;
}

export class EdgeThreadPool implements EdgeEngine {
  private readonly size: number;
  private readonly log: Log;
  private readonly threads: Thread[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: EdgeThreadPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? 2);
    this.log = options.log ?? consoleLog;
  }

  engineFor(command: string, requested: BashEngine, workspace?: WorkspaceFacts): Promise<'edge' | 'runner'> {
    // Asked of no thread when the answer needs no interpreter.
    if (requested === 'runner') return Promise.resolve('runner');
    return this.ask<'edge' | 'runner'>((id) => ({ kind: 'engine', id, command, requested, workspace }));
  }

  interpret(source: EdgeSource, run: EdgeRun): Promise<EdgeInterpretation> {
    const { scope, listing } = source;
    return this.ask<EdgeInterpretation>(
      (id, thread) => {
        // A listing the thread was sent is not sent again (it asks for it if it has dropped it).
        if (thread.listings.get(listing) !== undefined) return { kind: 'interpret', id, scope, listing, run };
        const { entries } = source;
        thread.listings.keep(listing, entries.length, entries.length);
        return { kind: 'interpret', id, entries, scope, listing, run };
      },
      {
        source,
        stopAfterMs: run.timeoutMs + STOP_GRACE_MS,
      },
    );
  }

  /** Fails every command in hand with `unavailable` and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    for (const thread of threads) this.fail(thread, closing());
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  private ask<Answer>(
    request: (id: number, thread: Thread) => Exclude<EdgeThreadRequest, { kind: 'read' }>,
    options: { source?: EdgeSource; stopAfterMs?: number } = {},
  ): Promise<Answer> {
    if (this.closed) return Promise.reject(closing());
    const thread = this.leastBusy();
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      const job: Job = { resolve: resolve as (answer: unknown) => void, reject, source: options.source };
      if (options.stopAfterMs !== undefined) job.timer = setTimeout(() => this.stuck(thread, id), options.stopAfterMs);
      thread.jobs.set(id, job);
      // A thread with a command in hand keeps the process alive until it answers.
      thread.worker.ref();
      thread.worker.postMessage(request(id, thread));
    });
  }

  private leastBusy(): Thread {
    const idle = this.threads.find((thread) => thread.jobs.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) return this.start();
    return this.threads.reduce((best, thread) => (thread.jobs.size < best.jobs.size ? thread : best));
  }

  private start(): Thread {
    // No execArgv: the entry loads TypeScript itself and needs none of the parent's loaders.
    const worker = new Worker(this.options.program ?? ENTRY, { execArgv: [] });
    const thread: Thread = { worker, jobs: new Map(), listings: new KeptListings(KEPT_LISTING_ENTRIES) };
    worker.on('message', (message: EdgeThreadMessage) => this.received(thread, message));
    worker.on('messageerror', (error) => this.lost(thread, error));
    worker.on('error', (error) => this.lost(thread, error));
    worker.on('exit', (code) => this.lost(thread, new Error(`the edge thread exited with code ${code}`)));
    // Unreferenced only once its listeners are on: adding a message listener references it again.
    worker.unref();
    this.threads.push(thread);
    return thread;
  }

  private received(thread: Thread, message: EdgeThreadMessage): void {
    if (message.kind === 'read' || message.kind === 'read-many' || message.kind === 'read-listing') {
      void this.serveRead(thread, message);
      return;
    }
    const job = thread.jobs.get(message.id);
    if (job === undefined) return;
    this.settled(thread, message.id, job);
    if (message.kind === 'engine') job.resolve(message.engine);
    else if (message.kind === 'interpreted') job.resolve(message.interpretation);
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
        answer = { kind: 'read', readId: message.readId, entries: source.entries };
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

  private settled(thread: Thread, id: number, job: Job): void {
    thread.jobs.delete(id);
    if (job.timer !== undefined) clearTimeout(job.timer);
    if (thread.jobs.size === 0) thread.worker.unref();
  }

  /** A command that outran its timeout by the grace without a word: its thread is stopped, with what else it ran. */
  private stuck(thread: Thread, id: number): void {
    const job = thread.jobs.get(id);
    if (job === undefined) return;
    this.log(`an edge thread ran a command ${STOP_GRACE_MS} ms past its timeout; stopping the thread`);
    this.settled(thread, id, job);
    job.reject(
      new ToolError(
        'timeout',
        'The command ran past its timeoutMs and was stopped; none of its changes were kept. Run it with engine "runner".',
      ),
    );
    this.drop(
      thread,
      new ToolError('unavailable', 'The edge engine stopped while running the command; retry the call.'),
    );
  }

  /** A thread that died (or sent what cannot be read): its commands fail, and the next command starts a new one. */
  private lost(thread: Thread, cause: unknown): void {
    if (!this.threads.includes(thread) || this.closed) return;
    this.log('an edge thread stopped', cause);
    this.drop(
      thread,
      new ToolError(
        'unavailable',
        'The edge engine stopped before the command answered (its thread ended); retry the call.',
      ),
    );
  }

  private drop(thread: Thread, error: ToolError): void {
    const at = this.threads.indexOf(thread);
    if (at !== -1) this.threads.splice(at, 1);
    this.fail(thread, error);
    void thread.worker.terminate();
  }

  private fail(thread: Thread, error: ToolError): void {
    for (const [id, job] of thread.jobs) {
      this.settled(thread, id, job);
      job.reject(error);
    }
  }
}

function closing(): ToolError {
  return new ToolError('unavailable', 'The server is closing, so the command did not finish; retry the call.');
}

// The worker threads of a pool on the Node home (grep's search threads, the edge engine's threads):
// started on first use, which thread takes a job, a thread kept referenced while it holds one, and
// what a thread that dies or a pool that closes does to the jobs in hand. Each pool's messages stay its own.
import { Worker } from 'node:worker_threads';
import type { ToolError } from '../core/errors.ts';
import type { Log } from '../core/log.ts';

/** A job in a thread's hands: failed through `reject`; its timer, if any, is cleared once it leaves. */
export interface PoolJob {
  reject: (error: ToolError) => void;
  timer?: ReturnType<typeof setTimeout>;
}

export interface PoolThread<Job extends PoolJob, Kept = undefined> {
  readonly worker: Worker;
  /** The jobs it holds, by the id their messages carry. */
  readonly jobs: Map<number, Job>;
  /** What the pool records beside the thread (the edge pool: the listings it sent it). */
  readonly kept: Kept;
}

export interface ThreadPoolOptions<Job extends PoolJob, Message, Kept> {
  /** The threads' program: a JavaScript entry beside the pool's own module. */
  program: URL;
  /** Threads at most. */
  size: number;
  /** Jobs a thread holds at once; once every thread holds this many, jobs wait their turn in order. */
  jobsPerThread: number;
  /** What the threads are, for the log: `search`, `edge`. */
  name: string;
  log: Log;
  /** The record kept beside a new thread. */
  kept: () => Kept;
  /** Every message a thread sends. */
  received: (thread: PoolThread<Job, Kept>, message: Message) => void;
  /** The error of each job of a thread that ended before it answered. */
  lostError: () => ToolError;
  /** The error of each job the closing pool had not finished. */
  closingError: () => ToolError;
}

/** Sends a job's request to the thread that took it, under the id its answer carries. */
export type SendJob<Job extends PoolJob, Kept> = (thread: PoolThread<Job, Kept>, id: number) => void;

export class ThreadPool<Job extends PoolJob, Message, Kept = undefined> {
  private readonly threads: PoolThread<Job, Kept>[] = [];
  private readonly queued: { job: Job; send: SendJob<Job, Kept> }[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: ThreadPoolOptions<Job, Message, Kept>) {}

  /** Gives the job an idle thread, a new one, the least busy one with room, or a place in the queue. */
  add(job: Job, send: SendJob<Job, Kept>): void {
    if (this.closed) return job.reject(this.options.closingError());
    this.queued.push({ job, send });
    this.dispatch();
  }

  /** Takes an answered job off its thread (undefined when it has left already); the thread takes the next queued job. */
  settle(thread: PoolThread<Job, Kept>, id: number): Job | undefined {
    const job = thread.jobs.get(id);
    if (job === undefined) return undefined;
    thread.jobs.delete(id);
    if (job.timer !== undefined) clearTimeout(job.timer);
    if (thread.jobs.size === 0) thread.worker.unref();
    this.dispatch();
    return job;
  }

  /** Stops a thread, failing every job it holds with `error`; the next job starts a new one. */
  drop(thread: PoolThread<Job, Kept>, error: ToolError): void {
    const at = this.threads.indexOf(thread);
    if (at !== -1) this.threads.splice(at, 1);
    this.fail(thread, () => error);
    void thread.worker.terminate();
    this.dispatch();
  }

  /** Fails what is queued or in hand with the closing error and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    for (const { job } of this.queued.splice(0)) job.reject(this.options.closingError());
    const threads = this.threads.splice(0);
    for (const thread of threads) this.fail(thread, this.options.closingError);
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queued.length > 0) {
      const thread = this.threadWithRoom();
      if (thread === undefined) return;
      const { job, send } = this.queued.shift()!;
      const id = this.nextId++;
      thread.jobs.set(id, job);
      // A thread with a job in hand keeps the process alive until it answers.
      thread.worker.ref();
      send(thread, id);
    }
  }

  private threadWithRoom(): PoolThread<Job, Kept> | undefined {
    const idle = this.threads.find((thread) => thread.jobs.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.options.size) return this.start();
    const least = this.threads.reduce((best, thread) => (thread.jobs.size < best.jobs.size ? thread : best));
    return least.jobs.size < this.options.jobsPerThread ? least : undefined;
  }

  private start(): PoolThread<Job, Kept> {
    const { program, name } = this.options;
    // No execArgv: the entry loads TypeScript itself and needs none of the parent's loaders.
    const worker = new Worker(program, { execArgv: [] });
    const thread: PoolThread<Job, Kept> = { worker, jobs: new Map(), kept: this.options.kept() };
    worker.on('message', (message: Message) => this.options.received(thread, message));
    worker.on('messageerror', (error) => this.lost(thread, error));
    worker.on('error', (error) => this.lost(thread, error));
    worker.on('exit', (code) => this.lost(thread, new Error(`the ${name} thread exited with code ${code}`)));
    // Unreferenced only once its listeners are on: adding a message listener references it again.
    worker.unref();
    this.threads.push(thread);
    return thread;
  }

  /** A thread that died (or sent what cannot be read): its jobs fail, and the next job starts a new thread. */
  private lost(thread: PoolThread<Job, Kept>, cause: unknown): void {
    if (this.closed || !this.threads.includes(thread)) return;
    const { name } = this.options;
    this.options.log(`${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} thread stopped`, cause);
    this.drop(thread, this.options.lostError());
  }

  private fail(thread: PoolThread<Job, Kept>, error: () => ToolError): void {
    for (const id of [...thread.jobs.keys()]) {
      const job = thread.jobs.get(id)!;
      thread.jobs.delete(id);
      if (job.timer !== undefined) clearTimeout(job.timer);
      job.reject(error());
    }
    thread.worker.unref();
  }
}

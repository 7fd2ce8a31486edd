// In-process notices of process changes and queued jobs, so request handlers wait without polling.
import { scopeCovers, type WorkspaceScope } from '../core/workspace-scope.ts';
import { consoleLog, type Log } from '../core/log.ts';

/** A kind of job waiting for a runner: which workspace, and whether it is an exec. */
export interface JobCandidate {
  workspace: string;
  exec: boolean;
}

/** The longest delay setTimeout honours; longer ones would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

type Entry<T extends unknown[]> = { listener: (...args: T) => void };

class Listeners<T extends unknown[]> {
  // Entries, not functions: the same function added twice is two subscriptions.
  readonly #entries = new Set<Entry<T>>();

  constructor(private readonly log: Log) {}

  add(listener: (...args: T) => void): () => void {
    const entry = { listener };
    this.#entries.add(entry);
    return () => {
      this.#entries.delete(entry);
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  emit(...args: T): void {
    for (const entry of [...this.#entries]) {
      try {
        entry.listener(...args);
      } catch (error) {
        // The change is committed: a listener's failure must not turn it into an error answer.
        this.log('a process listener failed', error);
      }
    }
  }
}

/**
 * Notices fire after the change has committed, in this process only: each home keeps one
 * store per database (per Durable Object on Cloudflare), so every change passes through it.
 */
export class ProcessEvents {
  readonly #changed: Listeners<[string]>;
  readonly #queued: Listeners<[]>;
  /** Runners' lease requests waiting for a job, oldest first: a queued job wakes one, not all. */
  readonly #jobWaiters: { scope: WorkspaceScope; execOnly: boolean; wake: () => void }[] = [];

  /** `log` hears of a listener that failed: the change it was told of stays committed. */
  constructor(log: Log = consoleLog) {
    this.#changed = new Listeners(log);
    this.#queued = new Listeners(log);
  }

  onChange(listener: (id: string) => void): () => void {
    return this.#changed.add(listener);
  }

  onQueued(listener: () => void): () => void {
    return this.#queued.add(listener);
  }

  /** How many listen for changes: what tests read to see that a closed stream let go. */
  get changeListeners(): number {
    return this.#changed.size;
  }

  changed(ids: Iterable<string>): void {
    for (const id of ids) this.#changed.emit(id);
  }

  /** A job was queued (or queued again): for listeners that hand jobs on (the Cloudflare home's Queue). Waiters are woken apart. */
  queued(): void {
    this.#queued.emit();
  }

  /**
   * Waits until `wakeJobWaiter` picks this waiter ('woken'), or `timeoutMs`. Waiters are woken one at a
   * time, oldest first, and only for a job in their scope: a job wakes the lease request that will
   * take it, not every idle runner's (whose answers and new requests would all be served while the
   * job starts), nor a runner that may not take it.
   */
  waitForJob(scope: WorkspaceScope, execOnly: boolean, timeoutMs: number): Promise<'woken' | 'timed-out'> {
    return new Promise((resolve) => {
      const waiter = {
        scope,
        execOnly,
        wake: () => {
          clearTimeout(timer);
          resolve('woken');
        },
      };
      const timer = setTimeout(
        () => {
          const index = this.#jobWaiters.indexOf(waiter);
          if (index !== -1) this.#jobWaiters.splice(index, 1);
          resolve('timed-out');
        },
        Math.min(Math.max(timeoutMs, 0), MAX_TIMER_MS),
      );
      this.#jobWaiters.push(waiter);
    });
  }

  /** Wakes the oldest waiting lease request that may take one of these jobs (its workspace in scope, an exec for an exec-only one), if any. */
  wakeJobWaiter(jobs: readonly JobCandidate[]): void {
    const index = this.#jobWaiters.findIndex((waiter) =>
      jobs.some((job) => scopeCovers(waiter.scope, job.workspace) && (job.exec || !waiter.execOnly)),
    );
    if (index !== -1) this.#jobWaiters.splice(index, 1)[0]!.wake();
  }
}

/**
 * Settles with `answer()` at the first notice from `subscribe` after which `isDone()` holds, or
 * at `timeoutMs` whatever `isDone()` says. A throw from either settles it as a rejection.
 */
export function waitFor<T>(
  subscribe: (notice: () => void) => () => void,
  isDone: () => boolean,
  answer: () => T,
  timeoutMs: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (timedOut: boolean): void => {
      if (settled) return;
      try {
        if (!timedOut && !isDone()) return;
        resolve(answer());
      } catch (error) {
        reject(error);
      }
      settled = true;
      clearTimeout(timer);
      unsubscribe();
    };
    const unsubscribe = subscribe(() => settle(false));
    const timer = setTimeout(() => settle(true), Math.min(Math.max(timeoutMs, 0), MAX_TIMER_MS));
  });
}

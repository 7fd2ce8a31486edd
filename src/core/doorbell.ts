// A doorbell for one waiting reader: rung by notices, it remembers a ring until the reader waits again, so none is lost between a read and the wait after it.

/** Why a wait ended: a ring since the last `clear`, no ring within the idle time, or the reader's signal aborted. */
export type DoorbellWait = 'rung' | 'idle' | 'closed';

/**
 * A reader woken many times a second (a stream following a busy process) waits as often: its waits
 * share one idle timer, set when none runs and set again for the rest when it fires before the
 * current wait's idle time, and one abort listener per signal, rather than a timer and a listener
 * made and dropped at every wait.
 */
export class Doorbell {
  #rung = false;
  #wake: ((how: DoorbellWait) => void) | undefined;
  /** When the current wait goes idle (Date.now() milliseconds). */
  #idleAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #watched: AbortSignal | undefined;

  ring(): void {
    this.#rung = true;
    this.#end('rung');
  }

  /** Forgets earlier rings: call before reading what the notices are about. */
  clear(): void {
    this.#rung = false;
  }

  /** Ends at once when rung since `clear`; else at the next ring, after `idleMs`, or when `signal` aborts. */
  wait(idleMs: number, signal: AbortSignal): Promise<DoorbellWait> {
    if (signal.aborted) return Promise.resolve('closed');
    if (this.#rung) return Promise.resolve('rung');
    if (this.#watched !== signal) {
      this.#watched?.removeEventListener('abort', this.#onAbort);
      this.#watched = signal;
      signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    this.#idleAt = Date.now() + idleMs;
    this.#timer ??= setTimeout(this.#onTimer, idleMs);
    return new Promise((resolve) => (this.#wake = resolve));
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    // With no reader waiting, the next wait sets a timer of its own.
    if (!this.#wake) return;
    const rest = this.#idleAt - Date.now();
    if (rest > 0) this.#timer = setTimeout(this.#onTimer, rest);
    else this.#end('idle');
  };

  readonly #onAbort = (): void => {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#watched = undefined;
    this.#end('closed');
  };

  #end(how: DoorbellWait): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.(how);
  }
}

// A doorbell for one waiting reader: rung by notices, it remembers a ring until the reader waits again, so none is lost between a read and the wait after it.

/** Why a wait ended: a ring since the last `clear`, no ring within the idle time, or the reader's signal aborted. */
export type DoorbellWait = 'rung' | 'idle' | 'closed';

export class Doorbell {
  #rung = false;
  #wake: (() => void) | undefined;

  ring(): void {
    this.#rung = true;
    this.#wake?.();
  }

  /** Forgets earlier rings: call before reading what the notices are about. */
  clear(): void {
    this.#rung = false;
  }

  /** Ends at once when rung since `clear`; else at the next ring, after `idleMs`, or when `signal` aborts. */
  wait(idleMs: number, signal: AbortSignal): Promise<DoorbellWait> {
    if (signal.aborted) return Promise.resolve('closed');
    if (this.#rung) return Promise.resolve('rung');
    return new Promise((resolve) => {
      const finish = (how: DoorbellWait) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#wake = undefined;
        resolve(how);
      };
      const onAbort = () => finish('closed');
      const timer = setTimeout(() => finish('idle'), idleMs);
      signal.addEventListener('abort', onAbort);
      this.#wake = () => finish('rung');
    });
  }
}

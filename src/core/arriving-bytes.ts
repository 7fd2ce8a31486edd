// A body of a known length whose bytes arrive over time, read in place as they do (an archive is unpacked while it uploads).

/**
 * A body of `bytes.byteLength` bytes, of which the first `available` are there: its reader works
 * on what has arrived and waits (`until`) for more, so reading overlaps the sending. Bytes once
 * there never change, and `bytes` is never replaced, so views of it stay valid.
 */
export interface ArrivingBytes {
  /** The whole body's array: its length is the body's, its first `available` bytes are there. */
  readonly bytes: Uint8Array;
  /** How many bytes have arrived. */
  readonly available: number;
  /** Resolves once at least `end` bytes (at most the body's length) have arrived; rejects when the body fails before. */
  until(end: number): Promise<void>;
}

/** Bytes all there already. */
export function arrived(bytes: Uint8Array): ArrivingBytes {
  return { bytes, available: bytes.byteLength, until: () => Promise.resolve() };
}

/**
 * Bytes as a sender fills them in: `receive` copies a chunk in after the ones before, `fail` ends
 * the body early (every wait rejects with its reason). The sender must not receive more than the
 * length, nor after a failure.
 */
export class BytesArriving implements ArrivingBytes {
  readonly bytes: Uint8Array;
  #available = 0;
  #failure: { error: Error } | undefined;
  /** Waits by the byte count they need, in the order they were asked. */
  readonly #waits: { end: number; resolve: () => void; reject: (error: Error) => void }[] = [];

  constructor(length: number) {
    this.bytes = new Uint8Array(length);
  }

  get available(): number {
    return this.#available;
  }

  /** Whether every byte has arrived. */
  get complete(): boolean {
    return this.#available === this.bytes.byteLength;
  }

  until(end: number): Promise<void> {
    if (Math.min(end, this.bytes.byteLength) <= this.#available) return Promise.resolve();
    if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
    return new Promise((resolve, reject) => this.#waits.push({ end, resolve, reject }));
  }

  receive(chunk: Uint8Array): void {
    this.bytes.set(chunk, this.#available);
    this.#available += chunk.byteLength;
    for (let index = 0; index < this.#waits.length;) {
      const wait = this.#waits[index]!;
      if (Math.min(wait.end, this.bytes.byteLength) > this.#available) index += 1;
      else {
        this.#waits.splice(index, 1);
        wait.resolve();
      }
    }
  }

  /** Ends the body short: waits for bytes not yet there reject (none can be once every byte is). */
  fail(error: Error): void {
    if (this.complete) return;
    this.#failure ??= { error };
    for (const wait of this.#waits.splice(0)) wait.reject(this.#failure.error);
  }
}

// Ships a command's output to the server in batches, and keeps exec's separate streams.
import { cutAtChars } from '../../core/text-lines.ts';
import type { LeasedJob } from '../../contract/runner-protocol.ts';
import type { RunnerClient } from '../runner-client.ts';

/** The least time between the starts of two batches: output after a quiet spell goes at once (an echo of stdin is seen at once), a stream gathers in between. */
const FLUSH_MS = 50;
/** The largest output batch: at most 3 bytes of UTF-8 a character, so well under the server's body limit. */
const MAX_BATCH_CHARS = 2 * 1024 * 1024;
/** Output waiting to be shipped beyond which the command's output is paused. */
const MAX_WAITING_CHARS = 8 * 1024 * 1024;
/** Pieces of pending output beyond which they are joined, so dropping old ones stays cheap. */
const MAX_PIECES = 4096;

/**
 * Ships a command's output to the server in order, one request at a time, at most one batch every
 * FLUSH_MS unless a full batch waits. While a request is out (or the pause runs), output gathers
 * as a list of pieces; when the server's ring is small enough, only the tail it would keep is
 * held and sent, and what came before is reported as skipped, so memory stays bounded and a fast
 * writer is neither slowed to the speed of the log store nor makes the store write output the
 * ring would drop at once. When the ring is too big to skip that way, reading pauses instead.
 */
export class OutputPump {
  onStale: (error: unknown) => void = () => undefined;
  /** Called with true when too much output waits to be shipped, and with false once it has drained. */
  onPressure: (high: boolean) => void = () => undefined;
  /** Output not yet shipped, oldest first; `pendingChars` is their total length. */
  private pending: string[] = [];
  private pendingChars = 0;
  /** Characters dropped from the front of the pending output since the last batch. */
  private skipped = 0;
  /** Characters accounted for by batches already sent (skipped ones included). */
  private sent = 0;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the last batch went (performance.now()). */
  private lastBatchAt = -Infinity;
  private paused = false;
  private readonly streams = { stdout: '', stderr: '' };
  private truncated = false;
  /** The ring's size when a far-behind runner may skip to its tail, else undefined. */
  private readonly keepChars: number | undefined;

  constructor(
    private readonly client: RunnerClient,
    private readonly job: LeasedJob,
    private readonly maxStreamChars: number,
  ) {
    this.keepChars = job.outputChars <= MAX_BATCH_CHARS ? job.outputChars : undefined;
  }

  add(stream: 'stdout' | 'stderr', text: string): void {
    if (text.length === 0) return;
    if (this.job.mode === 'exec') {
      const room = this.maxStreamChars - this.streams[stream].length;
      if (text.length > room) this.truncated = true;
      if (room > 0) this.streams[stream] += cutAtChars(text, room);
    }
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pending.length > MAX_PIECES) this.pending = [this.pending.join('')];
    this.dropOlderPieces();
    this.pressure();
    this.schedule();
  }

  execStreams(): { stdout: string; stderr: string; truncated: boolean } {
    return { ...this.streams, truncated: this.truncated };
  }

  /** Ships everything still pending, without waiting between batches. */
  async close(): Promise<void> {
    while (this.inFlight !== undefined || this.pendingChars > 0) {
      if (this.inFlight === undefined) this.flush();
      await this.inFlight;
    }
  }

  /** Sends the next batch when it is due: FLUSH_MS after the last batch (at once after a quiet spell), or now when a full one waits. */
  private schedule(): void {
    if (this.inFlight !== undefined || this.pendingChars === 0) return;
    // Waiting cannot make a full batch smaller (only skipping can), so it goes at once.
    if (this.keepChars === undefined && this.pendingChars >= MAX_BATCH_CHARS) {
      this.flush();
      return;
    }
    if (this.timer !== undefined) return;
    const wait = this.lastBatchAt + FLUSH_MS - performance.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight !== undefined || this.pendingChars === 0) return;
    if (this.keepChars !== undefined && this.pendingChars > this.keepChars) this.skipTo(this.keepChars);
    // A batch after a skip is the ring's tail (at most MAX_BATCH_CHARS + 1): it goes whole.
    const data = this.take(this.skipped > 0 ? this.pendingChars : MAX_BATCH_CHARS);
    const { skipped } = this;
    const offset = this.sent;
    this.skipped = 0;
    this.sent += skipped + data.length;
    this.lastBatchAt = performance.now();
    this.inFlight = this.client
      .output(this.job, this.job.token, data, offset, skipped)
      .catch(this.onStale)
      .finally(() => {
        this.inFlight = undefined;
        this.pressure();
        this.schedule();
      });
  }

  /** Removes and returns up to `max` characters from the front of the pending output, never half of a surrogate pair. */
  private take(max: number): string {
    let count = 0;
    let chars = 0;
    while (count < this.pending.length && chars + this.pending[count]!.length <= max) {
      chars += this.pending[count]!.length;
      count += 1;
    }
    const parts = this.pending.splice(0, count);
    const next = this.pending[0];
    if (next !== undefined && chars < max) {
      const head = cutAtChars(next, max - chars);
      if (head.length > 0) {
        parts.push(head);
        this.pending[0] = next.slice(head.length);
        chars += head.length;
      }
    }
    this.pendingChars -= chars;
    return parts.length === 1 ? parts[0]! : parts.join('');
  }

  /** Drops whole pieces from the front while what is left still holds the ring's tail, so memory stays near the ring's size. */
  private dropOlderPieces(): void {
    if (this.keepChars === undefined) return;
    let count = 0;
    let dropped = 0;
    while (
      count < this.pending.length - 1 &&
      this.pendingChars - dropped - this.pending[count]!.length >= this.keepChars
    ) {
      dropped += this.pending[count]!.length;
      count += 1;
    }
    if (count === 0) return;
    this.pending.splice(0, count);
    this.pendingChars -= dropped;
    this.skipped += dropped;
  }

  /** Drops the front of the pending output so that `keep` characters are left (one more to keep a surrogate pair whole). */
  private skipTo(keep: number): void {
    this.dropOlderPieces();
    const first = this.pending[0]!;
    let cut = this.pendingChars - keep;
    if (cut <= 0) return;
    // Never keep half of a surrogate pair: keep the whole pair.
    const code = first.charCodeAt(cut);
    if (code >= 0xdc00 && code <= 0xdfff) cut -= 1;
    if (cut <= 0) return;
    this.pending[0] = first.slice(cut);
    this.pendingChars -= cut;
    this.skipped += cut;
  }

  private pressure(): void {
    const waiting = this.pendingChars;
    if (!this.paused && waiting > MAX_WAITING_CHARS) {
      this.paused = true;
      this.onPressure(true);
    } else if (this.paused && waiting < MAX_WAITING_CHARS / 2) {
      this.paused = false;
      this.onPressure(false);
    }
  }
}

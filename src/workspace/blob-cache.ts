// A bounded cache of blob bytes that keeps what is read again; blobs are immutable, so it is never stale.
//
// Eviction is "second chance" (CLOCK), which approximates least-recently-used: a read only marks
// its entry, and the eviction pass moves a marked entry to the back instead of dropping it. A
// read is one map lookup; a runner's batch reads thousands of blobs at a time, and moving each to
// the back of the map on every read cost more than the batch's other work.

interface Entry {
  bytes: Uint8Array;
  /** Read since the eviction pass last reached it. */
  used: boolean;
}

export class BlobCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private pass: MapIterator<[string, Entry]> | undefined;

  constructor(private readonly maxBytes: number) {}

  get(key: string): Uint8Array | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.bytes;
  }

  set(key: string, value: Uint8Array): void {
    // A blob over an eighth of the budget would evict too much for one reader's benefit.
    if (value.byteLength > this.maxBytes / 8 || this.entries.has(key)) return;
    this.entries.set(key, { bytes: value, used: false });
    this.bytes += value.byteLength;
    // Oldest first: an entry read since it was last passed goes to the back, unmarked, once; an
    // unread one is dropped. Every entry is passed at most twice, so the pass always ends.
    while (this.bytes > this.maxBytes) {
      const next = this.nextOldest();
      if (next === undefined) break;
      const [oldest, entry] = next;
      this.entries.delete(oldest);
      if (entry.used) {
        entry.used = false;
        this.entries.set(oldest, entry);
      } else {
        this.bytes -= entry.bytes.byteLength;
      }
    }
  }

  /**
   * The oldest entry, from an iterator kept between passes: everything before its place has been
   * dropped or moved to the back, so it finds what a new one would, without stepping again over
   * the slots of the thousands of entries deleted before (a full cache storing a batch of small
   * blobs spent more time on those steps than on the rest of the batch).
   */
  private nextOldest(): [string, Entry] | undefined {
    let next = this.pass?.next();
    if (next === undefined || next.done === true) {
      this.pass = this.entries.entries();
      next = this.pass.next();
    }
    return next.done === true ? undefined : next.value;
  }

  /** Forgets a blob (it was deleted from the store). */
  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes.byteLength;
  }

  /** Whether the blob is held; unlike `get`, not a read. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** How many blobs and bytes are held. */
  get size(): { blobs: number; bytes: number } {
    return { blobs: this.entries.size, bytes: this.bytes };
  }
}

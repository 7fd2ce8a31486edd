// What an edge thread keeps of the file contents the server thread sent it: each crossing costs
// the server thread a read and a copy, and commands run again and again over the same files
// (grep -rn over 2,000 files crossed them all on every run). Kept by the workspace's store and
// the blob's hash, so a command is given only bytes its own workspace's entries name.
import type { EdgeReader } from '../tools/edge-bash/edge-fs.ts';
import { BlobCache } from '../workspace/blob-cache.ts';
import type { ManifestEntry } from '../workspace/manifest-entry.ts';

/** The most content bytes a thread keeps. */
export const KEPT_CONTENT_BYTES = 32 * 1024 * 1024;

export class KeptContents {
  private readonly cache: BlobCache;
  /**
   * Each entry's key, made once: a thread keeps a listing's entries between commands, and a new
   * key string costs its hashing again at every look-up (a grep -r looks up thousands).
   */
  private readonly keys = new WeakMap<ManifestEntry, { scope: string; key: string }>();

  constructor(maxBytes: number) {
    this.cache = new BlobCache(maxBytes);
  }

  /** A reader that answers from what is kept for `scope` where it can, and keeps what it is sent. */
  reader(scope: string | undefined, sent: Required<EdgeReader>): Required<EdgeReader> {
    if (scope === undefined) return sent;
    const keyOf = (entry: ManifestEntry) => {
      if (entry.blob === null) return undefined;
      const made = this.keys.get(entry);
      if (made?.scope === scope) return made.key;
      const key = `${scope}\0${entry.blob}`;
      this.keys.set(entry, { scope, key });
      return key;
    };
    const cached = (entry: ManifestEntry) => {
      const key = keyOf(entry);
      return key === undefined ? undefined : this.cache.get(key);
    };
    const keep = (entry: ManifestEntry, bytes: Uint8Array) => {
      const key = keyOf(entry);
      if (key !== undefined) this.cache.set(key, bytes);
      return bytes;
    };
    // The kept arrays themselves: a command's filesystem changes no content in place, and gives a
    // command only copies (EdgeFs.readFileBuffer).
    return {
      read: async (path, entry) => cached(entry) ?? keep(entry, await sent.read(path, entry)),
      readMany: async (entries) => {
        const found = entries.map(cached);
        const missing = entries.filter((_, index) => found[index] === undefined);
        if (missing.length > 0) {
          const fetched = await sent.readMany(missing);
          let next = 0;
          entries.forEach((entry, index) => {
            if (found[index] === undefined) found[index] = keep(entry, fetched[next++]!);
          });
        }
        return found as Uint8Array[];
      },
    };
  }
}

/** The most listing entries a thread keeps (about 150 bytes each: some 30 MB). */
export const KEPT_LISTING_ENTRIES = 200_000;

/**
 * What a state's listing weighs among those kept: its entries, and one more for the state's own
 * tree (its root, /workspace, /tmp), so that the states of empty workspaces count too.
 */
export const listingWeight = (entries: number) => entries + 1;

/**
 * Workspace listings by the state they are of (a manifest stamp: it names one state of one
 * workspace, and moves on with each commit): an edge thread keeps those it was sent (as the state's
 * tree, edge-snapshot.ts), and the pool keeps which it sent to each thread (their sizes only),
 * oldest dropped first, so a workspace's next command is not sent its listing again. A thread that
 * dropped one asks for it.
 */
export class KeptListings<Value> {
  private readonly kept = new Map<string, { value: Value; weight: number }>();
  private weight = 0;

  /** `dropped`: told of each value given to keep that is not kept, or no longer. */
  constructor(
    private readonly maxWeight: number,
    private readonly dropped: (value: Value) => void = () => undefined,
  ) {}

  get(key: string | undefined): Value | undefined {
    if (key === undefined) return undefined;
    const held = this.kept.get(key);
    if (held === undefined) return undefined;
    // The newest again.
    this.kept.delete(key);
    this.kept.set(key, held);
    return held.value;
  }

  keep(key: string | undefined, value: Value, weight: number): void {
    if (key === undefined || weight > this.maxWeight) return this.dropped(value);
    const before = this.kept.get(key);
    if (before !== undefined) {
      this.kept.delete(key);
      this.weight -= before.weight;
      if (before.value !== value) this.dropped(before.value);
    }
    this.kept.set(key, { value, weight });
    this.weight += weight;
    for (const [oldest, held] of this.kept) {
      if (this.weight <= this.maxWeight) break;
      this.kept.delete(oldest);
      this.weight -= held.weight;
      this.dropped(held.value);
    }
  }
}

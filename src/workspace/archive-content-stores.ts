// An archive's file contents stored in sets as they are read: each set one write of the object store, a few in flight, each file's blob filled in once known.
import type { Workspace } from './workspace.ts';

/**
 * Contents stored side by side, at most this many and this many bytes at a time: the Node store
 * makes a set durable with one sync of a journal file, so many small files go much faster many at
 * a time, and several sets in flight let one set's sync overlap the reading of the next (the S3
 * and R2 clients queue what their connections cannot take); the bytes stay well inside a Durable
 * Object's 128 MB beside the archive.
 */
const STORES_IN_FLIGHT = 8192;
const STORE_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * Contents gathered into one set before it is stored (see ContentStores): each set of the Node
 * store costs a sync and a thread's batch, so sets are large; one is written while the next is
 * gathered.
 */
const SET_FILES = 2048;
const SET_BYTES = 8 * 1024 * 1024;

/** A set of contents sent to the store: whether its files' blobs are filled in, whether it is stored, and the cell that tells it durable if the store gave one. */
interface SentSet {
  known: boolean;
  stored: boolean;
  cell: Int32Array | undefined;
}

/**
 * Stores contents in sets: a set goes to the store as soon as it is full, so its files are written
 * while the entries after it are read, and a set costs one write of the object store (the Node
 * store makes it durable with one sync) where a store per file cost a promise chain each. At most
 * STORES_IN_FLIGHT files and STORE_BYTES_IN_FLIGHT bytes are being stored at a time; each file's
 * blob is filled in once its set's ids are known (when the store tells them early, see
 * storeBlobs, else once the set is stored); the first failure is thrown to every caller after it.
 */
export class ContentStores {
  private files: { blob: string }[] = [];
  private contents: Uint8Array[] = [];
  private bytes = 0;
  /** Sets being stored, oldest first; each removes itself once it ends. */
  private readonly pending: Promise<void>[] = [];
  /** Every set sent, oldest first. */
  private readonly sets: SentSet[] = [];
  private filesInFlight = 0;
  private bytesInFlight = 0;
  private failure: { error: unknown } | undefined;

  constructor(private readonly workspace: Workspace) {}

  /** Adds a content to the set being gathered: a promise to wait for when the set went out (undefined otherwise). */
  add(file: { blob: string }, content: Uint8Array): Promise<void> | undefined {
    if (this.failure) throw this.failure.error;
    this.files.push(file);
    this.contents.push(content);
    this.bytes += content.byteLength;
    return this.files.length >= SET_FILES || this.bytes >= SET_BYTES ? this.send() : undefined;
  }

  /** Sends the set still gathered, once the sets in flight leave room for it. */
  async sendLast(): Promise<void> {
    if (this.files.length > 0) await this.send();
    if (this.failure) throw this.failure.error;
  }

  /** Once every content added is stored: throws the first failure. */
  async finished(): Promise<void> {
    await this.sendLast();
    await this.settled();
    if (this.failure) throw this.failure.error;
  }

  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  blobsKnown(): boolean {
    return this.files.length === 0 && this.sets.every((set) => set.known);
  }

  durableNow(timeoutMs: number): boolean {
    if (this.failure || !this.blobsKnown()) return false;
    const deadline = performance.now() + timeoutMs;
    for (const { stored, cell } of this.sets) {
      if (stored) continue;
      if (cell === undefined) return false;
      while (Atomics.load(cell, 0) === 0) {
        const left = deadline - performance.now();
        if (left <= 0) return false;
        Atomics.wait(cell, 0, 0, left);
      }
      if (Atomics.load(cell, 0) !== 1) return false;
    }
    return true;
  }

  /** Stores the set gathered, once the sets in flight leave room for it. */
  private async send(): Promise<void> {
    const { files, contents, bytes } = this;
    this.files = [];
    this.contents = [];
    this.bytes = 0;
    while (
      this.pending.length > 0 &&
      (this.filesInFlight + files.length > STORES_IN_FLIGHT || this.bytesInFlight + bytes > STORE_BYTES_IN_FLIGHT)
    )
      await this.pending[0];
    if (this.failure) throw this.failure.error;
    this.filesInFlight += files.length;
    this.bytesInFlight += bytes;
    const set: SentSet = { known: false, stored: false, cell: undefined };
    this.sets.push(set);
    const fill = (blobs: readonly string[]) => {
      for (const [index, file] of files.entries()) file.blob = blobs[index]!;
      set.known = true;
    };
    const stored: Promise<void> = this.workspace
      .storeBlobs(contents, (blobs, cell) => {
        fill(blobs);
        set.cell = cell;
      })
      .then(
        (blobs) => {
          fill(blobs);
          set.stored = true;
        },
        (error: unknown) => {
          this.failure ??= { error };
        },
      )
      .then(() => {
        this.pending.splice(this.pending.indexOf(stored), 1);
        this.filesInFlight -= files.length;
        this.bytesInFlight -= bytes;
      });
    this.pending.push(stored);
  }
}

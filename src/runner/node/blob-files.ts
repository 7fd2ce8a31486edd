// The runner's content-addressed blob cache on disk: a blob is fetched once, checked, then copied from here.
import { hash as digest } from 'node:crypto';
import { accessSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_COUNT = 500;
/** The first batches are smaller: the writing starts once the first answer is in, so it should come soon. */
const FIRST_BATCH_COUNTS = [100, 250];
const BATCHES_IN_FLIGHT = 4;
/** Batches being written where they are wanted at once (they may go to threads side by side). */
const WRITES_IN_FLIGHT = 2;
/** How long blocking file-system calls may hold the event loop before it gets a turn. */
const SLICE_MS = 4;
/** Checked blobs already written where a job wanted them, kept in memory until their cache copy is written. */
const MAX_UNSTORED_BYTES = 64 * 1024 * 1024;

export class BlobFiles {
  private readonly fetching = new Map<string, Promise<string>>();
  /**
   * Blobs of a batch whose cache copy waits until the job no longer does (`storeDeferred`): a
   * cold workspace writes each file once before its command starts, not twice. Until written,
   * they count as cached, and `file` writes one at once when it is asked for.
   */
  private readonly unstored = new Map<string, Uint8Array>();
  private unstoredBytes = 0;
  /**
   * The blobs each two-digit directory of the cache holds, listed once when first asked about and
   * kept up to date by this cache's own writes: a cold workspace asks about thousands of blobs the
   * cache lacks, which costs one listing per directory instead of a failing system call per blob.
   * Only a hint (`file` still checks the disk): a blob listed but removed since is fetched singly.
   */
  private readonly listed = new Map<string, Set<string>>();

  constructor(private readonly dir: string) {}

  /** The cached file of a blob, fetching it first when absent; bytes that do not hash to `hash` are refused. */
  async file(hash: string, fetchBlob: (hash: string) => Promise<Uint8Array>): Promise<string> {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`invalid blob id ${JSON.stringify(hash)}`);
    const file = this.pathOf(hash);
    if (this.unstored.has(hash)) this.storeUnstored(hash);
    if (this.cached(hash)) return file;
    let pending = this.fetching.get(hash);
    if (!pending) {
      pending = this.fetchInto(hash, file, fetchBlob).finally(() => this.fetching.delete(hash));
      this.fetching.set(hash, pending);
    }
    return pending;
  }

  /**
   * Fetches the blobs the cache lacks in batches of a few MiB, several requests ahead: a cold
   * workspace of thousands of small files costs tens of requests, not thousands. Each blob is
   * checked against its id and cached, and each batch is handed to `arrived` to be written where
   * it is wanted, two batches at a time. Cache copies are written with blocking calls, which take
   * a third of the time the same calls take through the thread pool; `letEventLoopRun` gives the
   * event loop a turn every few milliseconds. Answers the ids written; the rest are in the cache,
   * or are left to `file` (blobs too large for a batch, or missing from an answer).
   */
  async fetchMissing(
    blobs: readonly { hash: string; size: number }[],
    fetchMany: (hashes: string[]) => Promise<Map<string, Uint8Array>>,
    arrived: (blobs: { hash: string; bytes: Uint8Array }[]) => Promise<void>,
  ): Promise<Set<string>> {
    const batches: string[][] = [];
    let batch: string[] = [];
    let bytes = 0;
    for (const blob of new Map(blobs.map((entry) => [entry.hash, entry])).values()) {
      if (eventLoopTurnDue()) await letEventLoopRun();
      // Large blobs are left to the single-blob route: a batch answer is held in memory whole.
      if (blob.size > BATCH_BYTES || this.unstored.has(blob.hash) || this.listing(blob.hash).has(blob.hash)) continue;
      if (batch.length === (FIRST_BATCH_COUNTS[batches.length] ?? BATCH_COUNT) || bytes + blob.size > BATCH_BYTES) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(blob.hash);
      bytes += blob.size;
    }
    if (batch.length > 0) batches.push(batch);
    // Requests run ahead of the writing, which takes the answers in order, a few batches at a time.
    const answers: Promise<Map<string, Uint8Array>>[] = [];
    const request = () => {
      const hashes = batches[answers.length];
      if (!hashes) return;
      const answer = fetchMany(hashes);
      // Awaited in its turn; one failing while an earlier answer is written is not an unhandled rejection.
      answer.catch(() => undefined);
      answers.push(answer);
    };
    for (let i = 0; i < BATCHES_IN_FLIGHT; i += 1) request();
    const handed = new Set<string>();
    const writing: Promise<void>[] = [];
    try {
      for (const [index, hashes] of batches.entries()) {
        const fetched = await answers[index]!;
        request();
        const arrivals: { hash: string; bytes: Uint8Array }[] = [];
        for (const hash of hashes) {
          const content = fetched.get(hash);
          if (!content) continue;
          if (eventLoopTurnDue()) await letEventLoopRun();
          checkContent(hash, content);
          if (this.unstoredBytes + content.byteLength <= MAX_UNSTORED_BYTES) {
            this.unstored.set(hash, content);
            this.unstoredBytes += content.byteLength;
          } else {
            this.storeSync(hash, content);
          }
          arrivals.push({ hash, bytes: content });
        }
        const written = arrived(arrivals).then(() => arrivals.forEach(({ hash }) => handed.add(hash)));
        // Awaited below; a failure meanwhile is not an unhandled rejection.
        written.catch(() => undefined);
        writing.push(written);
        if (writing.length >= WRITES_IN_FLIGHT) await writing[writing.length - WRITES_IN_FLIGHT];
      }
    } finally {
      // Nothing is left writing once the caller moves on, even after a failure.
      await Promise.allSettled(writing);
    }
    await Promise.all(writing);
    return handed;
  }

  /** Writes the cache copies left for later by `fetchMissing`; the runner calls it once a job has answered. */
  async storeDeferred(): Promise<void> {
    for (const hash of [...this.unstored.keys()]) {
      await letEventLoopRun();
      if (this.unstored.has(hash)) this.storeUnstored(hash);
    }
  }

  private storeUnstored(hash: string): void {
    const bytes = this.unstored.get(hash)!;
    this.unstored.delete(hash);
    this.unstoredBytes -= bytes.byteLength;
    if (!this.listing(hash).has(hash)) this.storeSync(hash, bytes);
  }

  /** The blobs the cache directory of `hash` holds, as far as this cache knows (see `listed`). */
  private listing(hash: string): Set<string> {
    const prefix = hash.slice(0, 2);
    let names = this.listed.get(prefix);
    if (!names) {
      names = new Set();
      try {
        for (const name of readdirSync(join(this.dir, prefix))) if (/^[0-9a-f]{64}$/.test(name)) names.add(name);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      this.listed.set(prefix, names);
    }
    return names;
  }

  private pathOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }

  private cached(hash: string): boolean {
    if (this.unstored.has(hash)) return true;
    try {
      accessSync(this.pathOf(hash));
      return true;
    } catch {
      return false;
    }
  }

  private async fetchInto(
    hash: string,
    file: string,
    fetchBlob: (hash: string) => Promise<Uint8Array>,
  ): Promise<string> {
    const bytes = await fetchBlob(hash);
    checkContent(hash, bytes);
    // Written under a temporary name, then renamed: a reader never sees part of a blob.
    const temp = temporaryName(file);
    try {
      await writeFile(temp, bytes, { flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        await mkdir(join(this.dir, hash.slice(0, 2)), { recursive: true });
        await writeFile(temp, bytes, { flag: 'wx' });
      });
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    this.listing(hash).add(hash);
    return file;
  }

  /** `fetchInto`'s writing, with blocking calls, for the small blobs of a batch. */
  private storeSync(hash: string, bytes: Uint8Array): void {
    const file = this.pathOf(hash);
    const temp = temporaryName(file);
    try {
      try {
        writeFileSync(temp, bytes, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        mkdirSync(join(this.dir, hash.slice(0, 2)), { recursive: true });
        writeFileSync(temp, bytes, { flag: 'wx' });
      }
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    this.listing(hash).add(hash);
  }
}

function temporaryName(file: string): string {
  return `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
}

/** The SHA-256 of bytes as hex: one call, without a Hash object (a cold copy checks thousands of small blobs). */
export function sha256(bytes: Uint8Array): string {
  return digest('sha256', bytes, 'hex');
}

function checkContent(hash: string, bytes: Uint8Array): void {
  const actual = sha256(bytes);
  if (actual !== hash) throw new Error(`blob ${hash} arrived with the content of ${actual}; refusing it`);
}

let sliceEnds = 0;

/** Whether blocking calls have held the event loop for a slice; a hot loop checks it before awaiting `letEventLoopRun`. */
export function eventLoopTurnDue(): boolean {
  return performance.now() >= sliceEnds;
}

/**
 * Called between blocking file-system calls: once they have held the event loop for a few
 * milliseconds, waits for it to run (timers, sockets, other requests) before going on.
 */
export async function letEventLoopRun(): Promise<void> {
  if (performance.now() < sliceEnds) return;
  await new Promise((resolve) => setImmediate(resolve));
  sliceEnds = performance.now() + SLICE_MS;
}

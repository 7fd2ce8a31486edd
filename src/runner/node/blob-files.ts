// The runner's content-addressed blob cache on disk: a blob is fetched once, checked, then copied from here.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_COUNT = 500;
const BATCHES_IN_FLIGHT = 4;

export class BlobFiles {
  private readonly fetching = new Map<string, Promise<string>>();

  constructor(private readonly dir: string) {}

  /** The cached file of a blob, fetching it first when absent; bytes that do not hash to `hash` are refused. */
  async file(hash: string, fetchBlob: (hash: string) => Promise<Uint8Array>): Promise<string> {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`invalid blob id ${JSON.stringify(hash)}`);
    const file = join(this.dir, hash.slice(0, 2), hash);
    if (await access(file).then(() => true, () => false)) return file;
    let pending = this.fetching.get(hash);
    if (!pending) {
      pending = this.fetchInto(hash, file, fetchBlob).finally(() => this.fetching.delete(hash));
      this.fetching.set(hash, pending);
    }
    return pending;
  }

  /**
   * Fetches the blobs the cache lacks in batches of a few MiB, several batches at a time: a cold
   * workspace of thousands of small files costs tens of requests, not thousands.
   */
  async prefetch(blobs: readonly { hash: string; size: number }[], fetchMany: (hashes: string[]) => Promise<Map<string, Uint8Array>>): Promise<void> {
    const missing: { hash: string; size: number }[] = [];
    for (const blob of new Map(blobs.map((entry) => [entry.hash, entry])).values()) {
      if (!(await access(join(this.dir, blob.hash.slice(0, 2), blob.hash)).then(() => true, () => false))) missing.push(blob);
    }
    const batches: string[][] = [];
    let batch: string[] = [];
    let bytes = 0;
    for (const blob of missing) {
      // Large blobs are left to the single-blob route; the batch answer is JSON with base64 in it.
      if (blob.size > BATCH_BYTES) continue;
      if (batch.length === BATCH_COUNT || bytes + blob.size > BATCH_BYTES) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(blob.hash);
      bytes += blob.size;
    }
    if (batch.length > 0) batches.push(batch);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(BATCHES_IN_FLIGHT, batches.length) }, async () => {
        while (next < batches.length) {
          const fetched = await fetchMany(batches[next++]!);
          for (const [hash, content] of fetched) await this.file(hash, async () => content);
        }
      }),
    );
  }

  /** Copies a blob to `destination` (a reflink where the filesystem offers one), never linking: commands may edit it. */
  async copyTo(hash: string, destination: string, fetchBlob: (hash: string) => Promise<Uint8Array>): Promise<void> {
    await copyFile(await this.file(hash, fetchBlob), destination, constants.COPYFILE_FICLONE);
  }

  private async fetchInto(hash: string, file: string, fetchBlob: (hash: string) => Promise<Uint8Array>): Promise<string> {
    const bytes = await fetchBlob(hash);
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== hash) throw new Error(`blob ${hash} arrived with the content of ${actual}; refusing it`);
    await mkdir(join(this.dir, hash.slice(0, 2)), { recursive: true });
    const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await writeFile(temp, bytes);
    await rename(temp, file);
    return file;
  }
}

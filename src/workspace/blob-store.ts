// Content-addressed, immutable file contents of one workspace incarnation in the object store.
import { ToolError } from '../core/errors.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { deletePrefix, putMany } from '../storage/object-store.ts';
import { KeyedLock } from '../core/keyed-lock.ts';
import { BlobCache } from './blob-cache.ts';
import { BlobPins } from './blob-pins.ts';
import { BlobUploads } from './blob-uploads.ts';
import { sha256Hex, type ContentHasher } from '../core/content-hash.ts';

export const DEFAULT_BLOB_CACHE_BYTES = 64 * 1024 * 1024;

/** Object keys remembered (see `key`); past this many the memo starts over. */
const MAX_REMEMBERED_KEYS = 200_000;

/** How long a blob stored or found ahead of the commit that names it is kept from the sweeper. */
export const DEFAULT_BLOB_KEEP_MS = 15 * 60 * 1000;

/**
 * Asked once a blob is pinned for something about to name it, before it is written or looked up:
 * a promise to wait for when a sweep elsewhere may be deleting it (doomed-blobs.ts), else undefined.
 */
export type BlobClaim = (store: string, hash: string) => Promise<void> | undefined;

export class BlobStore {
  private readonly cache: BlobCache;
  private readonly pins: BlobPins;
  /** A blob's write and the sweeper's delete of it take turns, so a delete never lands after a write. */
  private readonly writes = new KeyedLock();
  /** Each blob's object key by workspace incarnation and hash, built once (see `key`). */
  private readonly keys = new Map<string, Map<string, string>>();
  private rememberedKeys = 0;

  constructor(
    private readonly objects: ObjectStore,
    cacheBytes = DEFAULT_BLOB_CACHE_BYTES,
    private readonly hashContent: ContentHasher = sha256Hex,
    keepMs = DEFAULT_BLOB_KEEP_MS,
    private readonly claim: BlobClaim = () => undefined,
  ) {
    this.cache = new BlobCache(cacheBytes);
    this.pins = new BlobPins(keepMs);
  }

  /**
   * Stores the bytes under their SHA-256 and returns it; storing the same bytes twice is harmless.
   * The blob is kept from the sweeper for a while (keepMs), for the commit that will name it.
   */
  async put(store: string, bytes: Uint8Array): Promise<string> {
    const { hash, release } = await this.putForCommit(store, bytes);
    this.pins.keep(this.key(store, hash));
    release();
    return hash;
  }

  /** Stores the bytes for a commit in flight: the blob is kept from the sweeper until `release`. */
  async putForCommit(store: string, bytes: Uint8Array): Promise<{ hash: string; release: () => void }> {
    const hash = await this.hashContent(bytes);
    const key = this.key(store, hash);
    const release = this.pins.hold(key);
    try {
      // Pinned first, then claimed: a sweep that dooms it after this point finds it pinned.
      await this.claim(store, hash);
      await this.writes.run(key, () => this.objects.put(key, bytes, { sha256: hash }));
    } catch (error) {
      release();
      throw error;
    }
    this.cache.set(key, bytes);
    return { hash, release };
  }

  /**
   * Stores many contents as `put` stores each, answering their SHA-256s in order; equal contents
   * are stored once. One pin, one turn of the write lock and one write of the object store serve
   * the set: a promise chain per blob cost more than writing an archive's thousands of small files.
   * `onDurabilityCell`, when the object store tells the set's durability through shared memory
   * (see PutManyOptions), hears the SHA-256s and that cell as soon as the write has begun.
   */
  async putMany(
    store: string,
    contents: readonly Uint8Array[],
    onDurabilityCell?: (hashes: readonly string[], cell: Int32Array) => void,
  ): Promise<string[]> {
    const { hashes, keys, release } = await this.putManyForCommit(store, contents, onDurabilityCell);
    this.pins.keepMany(keys);
    release();
    return hashes;
  }

  /** As putForCommit, for many contents: every blob is kept from the sweeper until `release`. */
  private async putManyForCommit(
    store: string,
    contents: readonly Uint8Array[],
    onDurabilityCell: ((hashes: readonly string[], cell: Int32Array) => void) | undefined,
  ): Promise<{ hashes: string[]; keys: string[]; release: () => void }> {
    const hashed = contents.map((bytes) => this.hashContent(bytes));
    const hashes = hashed.every((hash) => typeof hash === 'string') ? hashed : await Promise.all(hashed);
    // One write for each distinct content: the object store's set takes distinct keys.
    const unique = new Map<string, number>();
    for (const [index, hash] of hashes.entries()) unique.set(this.key(store, hash), index);
    const keys = [...unique.keys()];
    const release = this.pins.holdMany(keys);
    try {
      // Pinned first, then claimed: a sweep that dooms one after this point finds it pinned.
      const claims: Promise<void>[] = [];
      for (const index of unique.values()) {
        const claimed = this.claim(store, hashes[index]!);
        if (claimed !== undefined) claims.push(claimed);
      }
      if (claims.length > 0) await Promise.all(claims);
      const items = [...unique].map(([key, index]) => ({ key, body: contents[index]!, sha256: hashes[index]! }));
      const options =
        onDurabilityCell === undefined
          ? undefined
          : { onDurabilityCell: (cell: Int32Array) => onDurabilityCell(hashes, cell) };
      await this.writes.runMany(keys, () => putMany(this.objects, items, options));
    } catch (error) {
      release();
      throw error;
    }
    for (const [key, index] of unique) {
      const bytes = contents[index]!;
      // A view of a larger buffer (an archive's file) would keep all of that buffer alive while
      // the cache counts only the view's bytes: such contents are read from the store when asked.
      if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) this.cache.set(key, bytes);
    }
    return { hashes, keys, release };
  }

  /**
   * Deletes the blobs the sweeper found unreferenced (at most MAX_DELETE_BATCH, in one request),
   * but those a commit may be about to name (pinned) or that `stillUnreferenced` no longer
   * calls so, asked in turn with the blobs' writes. Answers how many it deleted.
   */
  async sweep(
    store: string,
    hashes: readonly string[],
    stillUnreferenced: (hash: string) => boolean,
  ): Promise<string[]> {
    const keys = new Map(hashes.map((hash) => [hash, this.key(store, hash)]));
    return this.writes.runMany([...keys.values()], async () => {
      const gone = [...keys].filter(([hash, key]) => !this.pins.isPinned(key) && stillUnreferenced(hash));
      for (const [, key] of gone) this.cache.delete(key);
      await this.objects.deleteMany(gone.map(([, key]) => key));
      return gone.map(([hash]) => hash);
    });
  }

  /** Whether a commit may be about to name the blob (a family sweep asks, see family-sweep.ts). */
  isPinned(store: string, hash: string): boolean {
    return this.pins.isPinned(this.key(store, hash));
  }

  /** The blob's bytes when the cache holds them, without waiting; callers must not modify them. */
  cached(store: string, hash: string): Uint8Array | undefined {
    return this.cache.get(this.key(store, hash));
  }

  /** The blob's bytes; callers must not modify them (they may be shared through the cache). */
  async get(store: string, hash: string): Promise<Uint8Array> {
    const key = this.key(store, hash);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const object = await this.objects.get(key);
    if (!object) {
      throw new ToolError(
        'unavailable',
        'A file content blob is missing from the object store; retry, and report it if it persists.',
        { blob: hash },
      );
    }
    this.cache.set(key, object.body);
    return object.body;
  }

  /** The byte size of a stored blob, or undefined when none is stored under the id. */
  async size(store: string, hash: string): Promise<number | undefined> {
    const key = this.key(store, hash);
    // Asked before a commit that names the blob: it is kept for it, as if just stored.
    this.pins.keep(key);
    const claimed = this.claim(store, hash);
    if (claimed) {
      await claimed;
      // A sweep elsewhere may have deleted it meanwhile: what this cache holds no longer says it is stored.
      this.cache.delete(key);
    }
    return this.cache.get(key)?.byteLength ?? (await this.objects.head(key))?.size;
  }

  /** Blobs uploaded in pieces to a workspace incarnation, staged under its prefix (so `deleteAll` takes them too). */
  uploads(store: string): BlobUploads {
    return new BlobUploads(this.objects, this, store);
  }

  /**
   * The blob's object key, which is also its cache key. A search looks up thousands of blobs a
   * call: building and hashing each key string anew cost more than the lookups themselves, while
   * a remembered key string keeps the hash V8 computed for it.
   */
  private key(store: string, hash: string): string {
    let byHash = this.keys.get(store);
    if (byHash === undefined) {
      byHash = new Map();
      this.keys.set(store, byHash);
    }
    let key = byHash.get(hash);
    if (key === undefined) {
      if (this.rememberedKeys >= MAX_REMEMBERED_KEYS) {
        this.keys.clear();
        this.rememberedKeys = 0;
        byHash = new Map();
        this.keys.set(store, byHash);
      }
      key = blobKey(store, hash);
      byHash.set(hash, key);
      this.rememberedKeys += 1;
    }
    return key;
  }

  /** Removes every blob of a deleted workspace incarnation. */
  async deleteAll(store: string): Promise<void> {
    this.rememberedKeys -= this.keys.get(store)?.size ?? 0;
    this.keys.delete(store);
    await deletePrefix(this.objects, storePrefix(store));
  }
}

function blobKey(store: string, hash: string): string {
  return `${storePrefix(store)}blobs/${hash.slice(0, 2)}/${hash}`;
}

/** Where everything of a store lives in the object store: its contents, its git objects, its staged uploads. */
export function storePrefix(store: string): string {
  return `ws/${store}/`;
}

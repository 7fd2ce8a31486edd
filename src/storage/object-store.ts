// The ObjectStore port: immutable-friendly key/value blobs (memory, fs, S3, R2 drivers).

export interface ObjectInfo {
  key: string;
  size: number;
  /** Opaque entity tag; changes whenever the object's bytes change. */
  etag: string;
}

export interface StoredObject extends ObjectInfo {
  body: Uint8Array;
}

export interface PutOptions {
  /** Write only when the current object has this etag. */
  ifMatch?: string;
  /** `*`: write only when no object exists under the key. */
  ifNoneMatch?: '*';
  /** The body's SHA-256 in hex, when the caller has it: a driver that keeps one need not compute it again. */
  sha256?: string;
}

/** One object of a `putMany`: written unconditionally, as `put` without preconditions writes it. */
export interface PutManyItem {
  key: string;
  body: Uint8Array;
  /** The body's SHA-256 in hex, when the caller has it (see PutOptions). */
  sha256?: string;
}

/** Keys one `deleteMany` takes at most (S3's and R2's batch limit). */
export const MAX_DELETE_BATCH = 1000;

/** Refuses a batch larger than a driver may take in one request. */
export function assertDeleteBatch(keys: readonly string[]): void {
  if (keys.length > MAX_DELETE_BATCH)
    throw new RangeError(`deleteMany takes at most ${MAX_DELETE_BATCH} keys; ${keys.length} were given`);
}

/** Objects per `list` page when the caller sets no limit. */
export const DEFAULT_LIST_LIMIT = 1000;

export interface ListOptions {
  /** Continue after the page that returned this cursor. */
  cursor?: string;
  /** At most this many objects per page (drivers may return fewer). */
  limit?: number;
}

export interface ObjectList {
  /** Objects in ascending key order. */
  objects: ObjectInfo[];
  /** Present when more objects follow. */
  cursor?: string;
}

/** A page of keys (`listKeys`), as `list` pages objects. */
export interface KeyList {
  /** Keys in ascending order. */
  keys: string[];
  /** Present when more keys follow. */
  cursor?: string;
}

/** Thrown by `put` when `ifMatch` / `ifNoneMatch` does not hold. */
export class PreconditionFailedError extends Error {
  constructor(key: string) {
    super(`precondition failed for object ${key}`);
    this.name = 'PreconditionFailedError';
  }
}

export interface ObjectStore {
  get(key: string): Promise<StoredObject | undefined>;
  head(key: string): Promise<ObjectInfo | undefined>;
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<ObjectInfo>;
  /**
   * Writes objects of distinct keys together, each as `put` would; resolves once all are stored,
   * rejects with the first failure (the others may or may not be stored then). Optional: a driver
   * that can write a set faster than one by one has it (the fs driver makes a set durable with one
   * sync); callers use `putMany` below, which puts each in turn otherwise.
   */
  putMany?(items: readonly PutManyItem[], options?: PutManyOptions): Promise<void>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes up to MAX_DELETE_BATCH keys in one request where the store has one (S3, R2); missing keys are no error. */
  deleteMany(keys: readonly string[]): Promise<void>;
  list(prefix: string, options?: ListOptions): Promise<ObjectList>;
  /**
   * The keys under a prefix, paged as `list` pages objects, without their sizes and etags.
   * Optional: a driver that must read each object to tell those (the fs driver: four system
   * calls an object) has it; callers use `listKeys` below, which takes them from `list` otherwise.
   */
  listKeys?(prefix: string, options?: ListOptions): Promise<KeyList>;
}

/** What a putMany may be asked besides its items. */
export interface PutManyOptions {
  /**
   * Called, before the set's write waits for anything, by a store that also tells when the set is
   * durable through shared memory: `cell[0]` (an Int32Array over a SharedArrayBuffer) turns 1 once
   * every object is durable, 2 when the write failed (the promise says why), and is notified, so a
   * caller that cannot await (inside a SQL transaction) may wait for it with Atomics.wait. A store
   * that never calls it tells only by its promise.
   */
  onDurabilityCell?: (cell: Int32Array) => void;
}

/**
 * Writes the items (distinct keys) by the store's own `putMany`, or by one `put` each when it has
 * none. It answers only once no write reads the bodies any more, a failure included: the caller may
 * then reuse their memory, so one put that fails must not leave others still sending bytes that
 * are about to change.
 */
export async function putMany(
  store: ObjectStore,
  items: readonly PutManyItem[],
  options?: PutManyOptions,
): Promise<void> {
  if (store.putMany) return store.putMany(items, options);
  const results = await Promise.allSettled(
    items.map(({ key, body, sha256 }) => store.put(key, body, sha256 === undefined ? {} : { sha256 })),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * A page of the keys under a prefix, by the store's own `listKeys`, or from `list` when it has
 * none. Those who need only keys (the sweeps, deleting a prefix) list this way: a key may name an
 * object deleted while the page was read.
 */
export async function listKeys(store: ObjectStore, prefix: string, options: ListOptions = {}): Promise<KeyList> {
  if (store.listKeys) return store.listKeys(prefix, options);
  const page = await store.list(prefix, options);
  const keys = page.objects.map((object) => object.key);
  return page.cursor === undefined ? { keys } : { keys, cursor: page.cursor };
}

/** Deletes every object under a prefix, page by page. */
export async function deletePrefix(store: ObjectStore, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await listKeys(store, prefix, cursor === undefined ? {} : { cursor });
    for (let at = 0; at < page.keys.length; at += MAX_DELETE_BATCH)
      await store.deleteMany(page.keys.slice(at, at + MAX_DELETE_BATCH));
    deleted += page.keys.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return deleted;
}

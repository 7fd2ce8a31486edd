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
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  list(prefix: string, options?: ListOptions): Promise<ObjectList>;
}

/** Deletes every object under a prefix, page by page. */
export async function deletePrefix(store: ObjectStore, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor === undefined ? {} : { cursor });
    await Promise.all(page.objects.map((object) => store.delete(object.key)));
    deleted += page.objects.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return deleted;
}

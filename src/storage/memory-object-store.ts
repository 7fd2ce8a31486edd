// The in-memory ObjectStore driver: tests, previews and single-process embedding (Worker-safe).

import {
  assertDeleteBatch,
  DEFAULT_LIST_LIMIT,
  PreconditionFailedError,
  type ListOptions,
  type ObjectInfo,
  type ObjectList,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './object-store.ts';

interface MemoryObject {
  body: Uint8Array;
  etag: string;
}

export class MemoryObjectStore implements ObjectStore {
  readonly #objects = new Map<string, MemoryObject>();
  /** Keys kept sorted so a page costs a binary search plus the page, not a sort of every key. */
  readonly #sortedKeys: string[] = [];
  /**
   * Etags come from a per-store write counter: every write gets a fresh one, so a stale
   * `ifMatch` never matches, and no hashing is needed (nothing Worker-incompatible).
   */
  #writes = 0;

  async get(key: string): Promise<StoredObject | undefined> {
    const object = this.#objects.get(key);
    if (object === undefined) return undefined;
    // A copy, so the caller cannot change what later readers see.
    return { key, size: object.body.byteLength, etag: object.etag, body: new Uint8Array(object.body) };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const object = this.#objects.get(key);
    return object === undefined ? undefined : { key, size: object.body.byteLength, etag: object.etag };
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<ObjectInfo> {
    // Check and write happen in one synchronous stretch, so conditional writes are atomic.
    const current = this.#objects.get(key);
    if (options.ifNoneMatch === '*' && current !== undefined) throw new PreconditionFailedError(key);
    if (options.ifMatch !== undefined && current?.etag !== options.ifMatch) {
      throw new PreconditionFailedError(key);
    }
    this.#writes += 1;
    const etag = `m${this.#writes}`;
    // A copy, so the caller may reuse its buffer without changing the stored object.
    this.#objects.set(key, { body: new Uint8Array(body), etag });
    if (current === undefined) this.#sortedKeys.splice(this.#lowerBound(key), 0, key);
    return { key, size: body.byteLength, etag };
  }

  async delete(key: string): Promise<void> {
    if (!this.#objects.delete(key)) return;
    this.#sortedKeys.splice(this.#lowerBound(key), 1);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    assertDeleteBatch(keys);
    for (const key of keys) await this.delete(key);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ObjectList> {
    const limit = Math.max(1, options.limit ?? DEFAULT_LIST_LIMIT);
    // The cursor is the last key of the previous page; keys deleted meanwhile do not matter.
    const after = options.cursor;
    let index = this.#lowerBound(after !== undefined && after > prefix ? after : prefix);
    if (after !== undefined && this.#sortedKeys[index] === after) index += 1;
    const objects: ObjectInfo[] = [];
    for (; index < this.#sortedKeys.length; index += 1) {
      const key = this.#sortedKeys[index] as string;
      if (!key.startsWith(prefix)) break;
      if (objects.length === limit) {
        return { objects, cursor: (objects[objects.length - 1] as ObjectInfo).key };
      }
      const object = this.#objects.get(key) as MemoryObject;
      objects.push({ key, size: object.body.byteLength, etag: object.etag });
    }
    return { objects };
  }

  /** Index of the first sorted key that is not less than `key` (code-unit order, as `<`). */
  #lowerBound(key: string): number {
    let low = 0;
    let high = this.#sortedKeys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#sortedKeys[middle] as string) < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

// The R2 ObjectStore driver: blobs of the Cloudflare home, through the Worker's R2 bucket binding.

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

/** The part of an R2 object's metadata this driver reads. */
export interface R2ObjectMetadata {
  key: string;
  size: number;
  /** The unquoted etag, the form `onlyIf` compares against. */
  etag: string;
}

export interface R2ObjectWithBody extends R2ObjectMetadata {
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** R2's conditional-write form; `*` is the wildcard that matches any existing object. */
export interface R2WriteConditional {
  etagMatches?: string;
  etagDoesNotMatch?: string;
}

export interface R2ObjectPage {
  objects: R2ObjectMetadata[];
  truncated: boolean;
  cursor?: string;
}

/**
 * The subset of the Workers R2 bucket binding (`R2Bucket`) this driver uses, declared here so
 * the module needs no Cloudflare types package; a real binding satisfies it structurally.
 */
export interface R2BucketBinding {
  get(key: string): Promise<R2ObjectWithBody | null>;
  head(key: string): Promise<R2ObjectMetadata | null>;
  /** Answers null, writing nothing, when `onlyIf` does not hold. */
  put(key: string, value: Uint8Array, options?: { onlyIf?: R2WriteConditional }): Promise<R2ObjectMetadata | null>;
  /** One key, or up to 1,000 in one request. */
  delete(keys: string | string[]): Promise<void>;
  list(options: { prefix: string; limit: number; cursor?: string }): Promise<R2ObjectPage>;
}

/** R2 refuses a list page larger than this. */
const R2_MAX_LIST_LIMIT = 1000;

export class R2ObjectStore implements ObjectStore {
  readonly #bucket: R2BucketBinding;

  constructor(bucket: R2BucketBinding) {
    this.#bucket = bucket;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const object = await this.#bucket.get(key);
    if (object === null) return undefined;
    const body = new Uint8Array(await object.arrayBuffer());
    return { key, size: body.byteLength, etag: object.etag, body };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const object = await this.#bucket.head(key);
    return object === null ? undefined : infoOf(object);
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<ObjectInfo> {
    // R2 evaluates `onlyIf` atomically with the write; a failed `etagMatches` on a missing
    // key fails too, as the port's ifMatch requires.
    const onlyIf: R2WriteConditional = {
      ...(options.ifMatch === undefined ? {} : { etagMatches: options.ifMatch }),
      ...(options.ifNoneMatch === undefined ? {} : { etagDoesNotMatch: options.ifNoneMatch }),
    };
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const written = await this.#bucket.put(key, body, conditional ? { onlyIf } : {});
    if (written === null) throw new PreconditionFailedError(key);
    return infoOf(written);
  }

  async delete(key: string): Promise<void> {
    // R2 deletes a missing key without complaint, which is what the port promises.
    await this.#bucket.delete(key);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    assertDeleteBatch(keys);
    if (keys.length > 0) await this.#bucket.delete([...keys]);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ObjectList> {
    // The port lets a driver return fewer objects than asked, so larger limits are capped.
    const limit = Math.min(R2_MAX_LIST_LIMIT, Math.max(1, options.limit ?? DEFAULT_LIST_LIMIT));
    const page = await this.#bucket.list({
      prefix,
      limit,
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    });
    const objects = page.objects.map(infoOf);
    return page.truncated && page.cursor !== undefined ? { objects, cursor: page.cursor } : { objects };
  }
}

function infoOf(object: R2ObjectMetadata): ObjectInfo {
  return { key: object.key, size: object.size, etag: object.etag };
}

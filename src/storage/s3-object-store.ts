// The S3 ObjectStore driver: any S3 API (AWS, R2 over its S3 endpoint, MinIO) via @aws-sdk/client-s3.

import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
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
import { readSetting } from '../contract/settings.ts';

export interface S3ObjectStoreOptions {
  bucket: string;
  client: S3Client;
}

export class S3ObjectStore implements ObjectStore {
  readonly #bucket: string;
  readonly #client: S3Client;

  constructor(options: S3ObjectStoreOptions) {
    this.#bucket = options.bucket;
    this.#client = options.client;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const response = await this.#client
      .send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }))
      .catch(undefinedWhenMissing);
    if (response === undefined) return undefined;
    const body = response.Body === undefined ? new Uint8Array() : await response.Body.transformToByteArray();
    return { key, size: body.byteLength, etag: requireEtag(response.ETag, key), body };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const response = await this.#client
      .send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }))
      .catch(undefinedWhenMissing);
    if (response === undefined) return undefined;
    return { key, size: response.ContentLength ?? 0, etag: requireEtag(response.ETag, key) };
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<ObjectInfo> {
    // The service evaluates IfMatch / IfNoneMatch atomically with the write (AWS S3 and R2 do;
    // servers that ignore the headers make conditional writes unconditional).
    const response = await this.#client
      .send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: body,
          ContentLength: body.byteLength,
          ...(options.ifMatch === undefined ? {} : { IfMatch: options.ifMatch }),
          ...(options.ifNoneMatch === undefined ? {} : { IfNoneMatch: options.ifNoneMatch }),
        }),
      )
      .catch((error: unknown) => {
        // AWS answers 409 ConditionalRequestConflict when a concurrent conditional write wins
        // the race: for the caller that is the same outcome as a failed precondition.
        if (statusOf(error) === 412 || nameOf(error) === 'ConditionalRequestConflict') {
          throw new PreconditionFailedError(key);
        }
        throw error;
      });
    if (response.ETag !== undefined) return { key, size: body.byteLength, etag: response.ETag };
    // Some S3-compatible servers omit the etag on PUT; a HEAD fetches it.
    const info = await this.head(key);
    if (info === undefined) throw new Error(`Object ${key} vanished right after it was written.`);
    return info;
  }

  async delete(key: string): Promise<void> {
    // S3 answers 204 for a missing key too, which is what the port promises.
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key })).catch(undefinedWhenMissing);
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    assertDeleteBatch(keys);
    if (keys.length === 0) return;
    const response = await this.#client.send(
      new DeleteObjectsCommand({
        Bucket: this.#bucket,
        Delete: { Objects: keys.map((key) => ({ Key: key })), Quiet: true },
      }),
    );
    // Quiet: only failures are listed; a missing key is no failure.
    const failed = (response.Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
    if (failed.length > 0)
      throw new Error(
        `S3 could not delete ${failed.length} objects, ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message}`,
      );
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ObjectList> {
    const response = await this.#client.send(
      new ListObjectsV2Command({
        Bucket: this.#bucket,
        Prefix: prefix,
        // S3 caps a page at 1000 keys; the port lets a driver return fewer than asked.
        MaxKeys: Math.max(1, options.limit ?? DEFAULT_LIST_LIMIT),
        ...(options.cursor === undefined ? {} : { ContinuationToken: options.cursor }),
      }),
    );
    const objects = (response.Contents ?? []).map((object) => ({
      key: object.Key ?? '',
      size: object.Size ?? 0,
      etag: requireEtag(object.ETag, object.Key ?? ''),
    }));
    const cursor = response.IsTruncated === true ? response.NextContinuationToken : undefined;
    return cursor === undefined ? { objects } : { objects, cursor };
  }
}

/**
 * Builds the store from `TOOLGATE_S3_*`, or returns undefined when no bucket is configured.
 * Credentials come from the SDK's standard chain (AWS_ACCESS_KEY_ID and friends), so they
 * never pass through toolgate's own configuration.
 */
export function s3ObjectStoreFromEnv(env: Record<string, string | undefined>): S3ObjectStore | undefined {
  const bucket = readSetting(env, 'TOOLGATE_S3_BUCKET', 'node');
  if (bucket === undefined) return undefined;
  const endpoint = readSetting(env, 'TOOLGATE_S3_ENDPOINT', 'node');
  const region = readSetting(env, 'TOOLGATE_S3_REGION', 'node');
  const client = new S3Client({
    region,
    ...(endpoint === undefined
      ? {}
      : {
          endpoint,
          // Custom endpoints (MinIO, R2, local servers) rarely have per-bucket DNS names.
          forcePathStyle: true,
          // The SDK's default flexible checksums are newer than many S3-compatible servers,
          // which reject or mangle them; AWS itself keeps the default.
          requestChecksumCalculation: 'WHEN_REQUIRED' as const,
          responseChecksumValidation: 'WHEN_REQUIRED' as const,
        }),
  });
  return new S3ObjectStore({ bucket, client });
}

function undefinedWhenMissing(error: unknown): undefined {
  // GET says NoSuchKey; HEAD has no body, so only NotFound / 404 is known. A missing bucket
  // is a misconfiguration, not a missing object, so it still throws where it can be told apart.
  const name = nameOf(error);
  if (name === 'NoSuchBucket') throw error;
  if (name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404) return undefined;
  throw error;
}

function requireEtag(etag: string | undefined, key: string): string {
  if (etag === undefined) throw new Error(`The S3 server returned no etag for object ${key}.`);
  return etag;
}

function nameOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'name' in error ? String(error.name) : undefined;
}

function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = error.$metadata as { httpStatusCode?: number } | undefined;
  return metadata?.httpStatusCode;
}

// Runs the ObjectStore contract against every Node-testable driver, plus driver-specific behaviour.

import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { FsObjectStore } from '../../src/storage/node/fs-object-store.ts';
import { PreconditionFailedError, putMany, type ObjectInfo } from '../../src/storage/object-store.ts';
import { S3ObjectStore, s3ObjectStoreFromEnv } from '../../src/storage/s3-object-store.ts';
import { startS3rver, s3rverClient, type RunningS3rver } from '../support/s3rver.ts';
import { describeObjectStoreContract } from './object-store-contract.ts';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const CONFIGURED_BUCKET = 'toolgate-configured';
/** One s3rver on loopback for the whole file, started on first use. */
let s3rverStarted: Promise<RunningS3rver> | undefined;
function startSharedS3rver(): Promise<RunningS3rver> {
  s3rverStarted ??= startS3rver(CONFIGURED_BUCKET);
  return s3rverStarted;
}

afterAll(async () => {
  if (s3rverStarted !== undefined) await (await s3rverStarted).stop();
});

describeObjectStoreContract('memory', async () => ({ store: new MemoryObjectStore() }));

describeObjectStoreContract('fs', async () => {
  const rootDir = await mkdtemp(join(tmpdir(), 'toolgate-fs-store-'));
  const store = new FsObjectStore(rootDir);
  // A large set's journal is moved to its files after the answer: the directory goes once it is.
  const teardown = async () => {
    await store.settled();
    await rm(rootDir, { recursive: true, force: true });
  };
  return { store, teardown };
});

let bucketCount = 0;
describeObjectStoreContract(
  's3 (s3rver)',
  async () => {
    const { endpoint } = await startSharedS3rver();
    const client = s3rverClient(endpoint);
    // A fresh bucket per test keeps listings independent of other tests.
    bucketCount += 1;
    const bucket = `contract-${bucketCount}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    return { store: new S3ObjectStore({ bucket, client }), teardown: async () => client.destroy() };
  },
  {
    // s3rver ignores the If-Match / If-None-Match headers on PutObject, so conditional writes
    // cannot be checked against it; the header tests below check that the driver sends them.
    conditionalWrites: false,
    // s3rver lists in the order of its on-disk file names, which puts `a/x` before `a` and
    // `a-c`; S3 itself sorts by key bytes.
    exactKeyOrder: false,
  },
);

describe('FsObjectStore', () => {
  let parent: string | undefined;
  afterEach(async () => {
    if (parent !== undefined) await rm(parent, { recursive: true, force: true });
  });

  it('refuses keys that could escape the root and creates nothing outside it', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-fs-escape-'));
    const rootDir = join(parent, 'root');
    await mkdir(rootDir);
    const store = new FsObjectStore(rootDir);
    const hostile = ['../x', '/abs', 'a//b', 'a\\b', 'a/../../x', '..', '.', 'a/./b', 'a/', '', 'nul\0byte'];
    for (const key of hostile) {
      await expect(store.put(key, text('pwned')), key).rejects.toThrow(Error);
      await expect(store.get(key), key).rejects.toThrow(Error);
      await expect(store.head(key), key).rejects.toThrow(Error);
      await expect(store.delete(key), key).rejects.toThrow(Error);
    }
    // A prefix is only compared with keys, never turned into a path.
    expect(await store.list('../')).toEqual({ objects: [] });
    expect(await readdir(parent)).toEqual(['root']);
    expect(await readdir(rootDir)).toEqual([]);
  });

  it('keeps objects across store instances and ignores temp files left by an interrupted write', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-fs-reopen-'));
    const written = await new FsObjectStore(parent).put('dir/kept', text('kept'));
    // What a process killed between writing its temp file and renaming it leaves behind.
    await writeFile(join(parent, '.tmp-deadbeef'), 'half');
    const dirs = (await readdir(parent)).filter((name) => !name.startsWith('.'));
    await writeFile(join(parent, dirs[0] as string, '.tmp-cafe'), 'half');
    const reopened = new FsObjectStore(parent);
    expect(await reopened.head('dir/kept')).toEqual({ key: 'dir/kept', size: 4, etag: written.etag });
    expect((await reopened.list('')).objects.map((object) => object.key)).toEqual(['dir/kept']);
  });

  it('names each object by its body’s SHA-256 however it was written, and again once reopened', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-fs-etag-'));
    const store = new FsObjectStore(parent);
    const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    const body = (name: string) => text(`${name} `.repeat(7));
    const one = await store.put('one', body('one'));
    // A few objects are written one file each; a large set goes through a journal first.
    const few = Array.from({ length: 3 }, (_, index) => ({ key: `few/${index}`, body: body(`few ${index}`) }));
    const many = Array.from({ length: 200 }, (_, index) => ({ key: `many/${index}`, body: body(`many ${index}`) }));
    await putMany(store, few);
    await putMany(store, many);
    const expected = [{ key: 'one', body: body('one') }, ...few, ...many];
    expect(one.etag).toBe(sha256(body('one')));
    const check = async (opened: FsObjectStore) => {
      for (const { key, body: bytes } of expected) {
        expect((await opened.head(key))?.etag, key).toBe(sha256(bytes));
        expect((await opened.get(key))?.etag, key).toBe(sha256(bytes));
      }
    };
    await check(store);
    // Once the journal is moved to its files, from them, by a store that opens the directory anew.
    await store.settled();
    await check(new FsObjectStore(parent));
  });

  it('serialises conditional writes to one key so exactly one racer wins each round', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-fs-race-'));
    const store = new FsObjectStore(parent);
    let current = await store.put('counter', text('0'));
    for (let round = 1; round <= 5; round += 1) {
      const expected = current.etag;
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, writer) =>
          store.put('counter', text(`${round}:${writer}`), { ifMatch: expected }),
        ),
      );
      const winners = results.filter((result) => result.status === 'fulfilled');
      expect(winners).toHaveLength(1);
      current = (winners[0] as PromiseFulfilledResult<typeof current>).value;
    }
  });
});

describe('S3ObjectStore', () => {
  it('sends If-None-Match and If-Match on conditional puts', async () => {
    const { endpoint } = await startSharedS3rver();
    const client = s3rverClient(endpoint);
    const sent: Record<string, string>[] = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        sent.push({ ...(args.request as { headers: Record<string, string> }).headers });
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    const store = new S3ObjectStore({ bucket: CONFIGURED_BUCKET, client });
    const created = await store.put('conditional/a', text('a'), { ifNoneMatch: '*' });
    await store.put('conditional/a', text('b'), { ifMatch: created.etag });
    expect(sent[0]?.['if-none-match']).toBe('*');
    expect(sent[1]?.['if-match']).toBe(created.etag);
    client.destroy();
  });

  it('maps a 412 from the service to PreconditionFailedError', async () => {
    const failing = {
      send: async () => {
        throw Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
          name: 'PreconditionFailed',
          $metadata: { httpStatusCode: 412 },
        });
      },
    } as unknown as S3Client;
    const store = new S3ObjectStore({ bucket: 'any', client: failing });
    await expect(store.put('k', text('x'), { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
  });
});

describe('s3ObjectStoreFromEnv', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('returns undefined when no bucket is configured', () => {
    expect(s3ObjectStoreFromEnv({})).toBeUndefined();
    expect(
      s3ObjectStoreFromEnv({ TOOLGATE_S3_ENDPOINT: 'http://127.0.0.1:9', TOOLGATE_S3_BUCKET: '' }),
    ).toBeUndefined();
  });

  it('builds a working store from TOOLGATE_S3_* and the standard AWS credential variables', async () => {
    const { endpoint } = await startSharedS3rver();
    // The SDK's default chain reads these from process.env; setting them keeps it off the network.
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'S3RVER');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'S3RVER');
    vi.stubEnv('AWS_SESSION_TOKEN', undefined);
    vi.stubEnv('AWS_PROFILE', undefined);
    const store = s3ObjectStoreFromEnv({ TOOLGATE_S3_ENDPOINT: endpoint, TOOLGATE_S3_BUCKET: CONFIGURED_BUCKET });
    expect(store).toBeInstanceOf(S3ObjectStore);
    const written = await store?.put('from-env/hello.txt', text('hello from env'));
    const read = await store?.get('from-env/hello.txt');
    expect(new TextDecoder().decode(read?.body)).toBe('hello from env');
    expect(read?.etag).toBe(written?.etag);
    expect((await store?.list('from-env/'))?.objects.map((object) => object.key)).toEqual(['from-env/hello.txt']);
  });
});

describe('putMany over a store without its own', () => {
  it('answers a failure only once every other put has ended, so no put still reads a body the caller then reuses', async () => {
    let slowStarted!: () => void;
    const started = new Promise<void>((resolve) => (slowStarted = resolve));
    let finishSlow!: () => void;
    const finished = new Promise<void>((resolve) => (finishSlow = resolve));
    class OneFailsOneWaits extends MemoryObjectStore {
      override async put(key: string, body: Uint8Array): Promise<ObjectInfo> {
        if (key === 'fails') throw new Error('the store refused it');
        if (key === 'slow') {
          slowStarted();
          await finished;
        }
        return super.put(key, body);
      }
    }
    const answer = putMany(new OneFailsOneWaits(), [
      { key: 'slow', body: text('slow') },
      { key: 'fails', body: text('fails') },
    ]).then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await started;
    const early = await Promise.race([answer, new Promise((tick) => setImmediate(() => tick('pending')))]);
    expect(early).toBe('pending');
    finishSlow();
    expect(await answer).toBe('the store refused it');
  });
});

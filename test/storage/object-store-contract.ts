// The ObjectStore contract: every driver (memory, fs, s3, r2) runs this suite and must pass it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  deletePrefix,
  listKeys,
  PreconditionFailedError,
  putMany,
  type ObjectStore,
} from '../../src/storage/object-store.ts';

export interface ObjectStoreFixture {
  store: ObjectStore;
  teardown?: () => Promise<void>;
}

export interface ObjectStoreContractOptions {
  /** Whether the backend enforces ifMatch / ifNoneMatch (some S3 emulators ignore them). */
  conditionalWrites?: boolean;
  /** Whether listing sorts a key before the keys it prefixes (`a` < `a-c` < `a/x`), as S3 does. */
  exactKeyOrder?: boolean;
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/**
 * Every key under `prefix`, following cursors with the given page size; `listKeys` (the driver's
 * own where it has one) must page the same keys as `list`, page for page.
 */
async function listAll(store: ObjectStore, prefix: string, limit?: number): Promise<string[]> {
  const keys: string[] = [];
  const pages: { keys: string[]; more: boolean }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, {
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (limit !== undefined) expect(page.objects.length).toBeLessThanOrEqual(limit);
    keys.push(...page.objects.map((object) => object.key));
    pages.push({ keys: page.objects.map((object) => object.key), more: page.cursor !== undefined });
    cursor = page.cursor;
  } while (cursor !== undefined);
  const keyPages: { keys: string[]; more: boolean }[] = [];
  do {
    const page = await listKeys(store, prefix, {
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    });
    keyPages.push({ keys: page.keys, more: page.cursor !== undefined });
    cursor = page.cursor;
  } while (cursor !== undefined);
  expect(keyPages).toEqual(pages);
  return keys;
}

export function describeObjectStoreContract(
  name: string,
  setup: () => Promise<ObjectStoreFixture>,
  options: ObjectStoreContractOptions = {},
): void {
  const conditionalWrites = options.conditionalWrites ?? true;
  const exactKeyOrder = options.exactKeyOrder ?? true;

  describe(`ObjectStore contract: ${name}`, () => {
    let store: ObjectStore;
    let teardown: (() => Promise<void>) | undefined;

    beforeEach(async () => {
      ({ store, teardown } = await setup());
    });
    afterEach(async () => {
      await teardown?.();
    });

    it('returns the exact bytes it was given, including every byte value', async () => {
      const body = Uint8Array.from({ length: 512 }, (_, index) => index % 256);
      const written = await store.put('blobs/binary', body);
      const read = await store.get('blobs/binary');
      expect(read?.body).toBeInstanceOf(Uint8Array);
      expect(Array.from(read?.body ?? [])).toEqual(Array.from(body));
      expect(read).toMatchObject({ key: 'blobs/binary', size: 512, etag: written.etag });
      expect(written).toMatchObject({ key: 'blobs/binary', size: 512 });
    });

    it('stores an empty object', async () => {
      await store.put('empty', new Uint8Array());
      const read = await store.get('empty');
      expect(read?.size).toBe(0);
      expect(read?.body.byteLength).toBe(0);
      expect((await store.head('empty'))?.size).toBe(0);
    });

    it('stores a 1 MiB object', async () => {
      const body = Uint8Array.from({ length: 1024 * 1024 }, (_, index) => (index * 7919) % 251);
      await store.put('large', body);
      const read = await store.get('large');
      expect(read?.size).toBe(body.byteLength);
      expect(Buffer.from(read?.body ?? []).equals(Buffer.from(body))).toBe(true);
    });

    it('answers undefined for a missing key on get and head', async () => {
      expect(await store.get('missing/key')).toBeUndefined();
      expect(await store.head('missing/key')).toBeUndefined();
    });

    it('reports size and etag on head, matching put', async () => {
      const written = await store.put('headed', text('hello'));
      expect(await store.head('headed')).toEqual({ key: 'headed', size: 5, etag: written.etag });
    });

    it('does not let the caller change stored bytes through its buffers', async () => {
      const body = text('original');
      await store.put('isolated', body);
      body.fill(0);
      const first = await store.get('isolated');
      first?.body.fill(0);
      expect(new TextDecoder().decode((await store.get('isolated'))?.body)).toBe('original');
    });

    it('overwrites an object and changes its etag when the bytes change', async () => {
      const first = await store.put('doc', text('one'));
      const second = await store.put('doc', text('two!'));
      expect(second.etag).not.toBe(first.etag);
      const read = await store.get('doc');
      expect(new TextDecoder().decode(read?.body)).toBe('two!');
      expect(read?.etag).toBe(second.etag);
      expect((await store.head('doc'))?.size).toBe(4);
    });

    it('deletes an object, and deleting a missing one is not an error', async () => {
      await store.put('gone', text('x'));
      await store.delete('gone');
      expect(await store.get('gone')).toBeUndefined();
      await expect(store.delete('gone')).resolves.toBeUndefined();
      await expect(store.delete('never/existed')).resolves.toBeUndefined();
    });

    it('deletes many objects in one call, missing ones no error, the others left, and refuses over 1,000', async () => {
      const keys = Array.from({ length: 1000 }, (_, i) => `many/${String(i).padStart(4, '0')}`);
      for (let at = 0; at < keys.length; at += 100)
        await Promise.all(keys.slice(at, at + 100).map((key) => store.put(key, text(key))));
      await store.put('many-kept', text('kept'));
      await store.deleteMany([...keys.slice(0, 999), 'never/existed']);
      expect(await listAll(store, 'many/')).toEqual(['many/0999']);
      expect((await store.head('many-kept'))?.size).toBe(4);
      await expect(store.deleteMany([])).resolves.toBeUndefined();
      await expect(store.deleteMany([...keys, 'one-more'])).rejects.toThrow(RangeError);
      expect(await listAll(store, 'many/')).toEqual(['many/0999']);
    });

    it('lists only keys under the prefix, respecting segment boundaries', async () => {
      for (const key of ['a/1', 'a/2/deep', 'ab/x', 'a', 'b/1']) await store.put(key, text(key));
      expect(await listAll(store, 'a/')).toEqual(['a/1', 'a/2/deep']);
      // Sorted here because this test is about boundaries; the next two are about order.
      expect((await listAll(store, 'a')).sort()).toEqual(['a', 'a/1', 'a/2/deep', 'ab/x']);
      expect(await listAll(store, 'a/2')).toEqual(['a/2/deep']);
      expect(await listAll(store, 'zzz/')).toEqual([]);
    });

    it('lists in ascending key order with sizes and etags', async () => {
      const keys = ['m/b', 'm/a', 'm/A', 'm/c d', 'm/0', 'm/B/x'];
      const etags = new Map<string, string>();
      for (const key of keys) etags.set(key, (await store.put(key, text(key))).etag);
      const page = await store.list('m/');
      expect(page.objects.map((object) => object.key)).toEqual([...keys].sort());
      for (const object of page.objects) {
        expect(object).toEqual({ key: object.key, size: text(object.key).byteLength, etag: etags.get(object.key) });
      }
      expect(page.cursor).toBeUndefined();
    });

    it.skipIf(!exactKeyOrder)('sorts a key before the keys it prefixes, by key not by file name', async () => {
      const keys = ['m/a/z', 'm/a-c', 'm/a.b', 'm/a', 'm/a/y/1', 'm/a!'];
      for (const key of keys) await store.put(key, text(key));
      expect(await listAll(store, 'm/')).toEqual([...keys].sort());
      expect(await listAll(store, 'm/', 2)).toEqual([...keys].sort());
    });

    it('pages through 30 keys with limit and cursor, each key exactly once', async () => {
      const keys = Array.from(
        { length: 30 },
        (_, index) => `page/${String(index).padStart(2, '0')}${index % 3 === 0 ? '/nested' : ''}`,
      );
      await Promise.all(keys.map((key) => store.put(key, text(key))));
      for (const limit of [1, 7, 10, 30, 100]) {
        expect(await listAll(store, 'page/', limit)).toEqual([...keys].sort());
      }
      const first = await store.list('page/', { limit: 10 });
      expect(first.objects).toHaveLength(10);
      expect(first.cursor).toBeDefined();
    });

    it('keeps keys with spaces, unicode, = and +', async () => {
      const keys = ['odd/with space', 'odd/ünïcödé-日本', 'odd/a=b', 'odd/a+b', 'odd/100%', 'odd/.hidden'];
      for (const key of keys) await store.put(key, text(`body of ${key}`));
      for (const key of keys) {
        expect(new TextDecoder().decode((await store.get(key))?.body)).toBe(`body of ${key}`);
      }
      expect(await listAll(store, 'odd/')).toEqual([...keys].sort());
    });

    it('deletes every object under a prefix and nothing else', async () => {
      const doomed = Array.from({ length: 12 }, (_, index) => `tmp/${index}`);
      for (const key of [...doomed, 'tmpfile', 'keep/1']) await store.put(key, text(key));
      expect(await deletePrefix(store, 'tmp/')).toBe(12);
      expect(await listAll(store, 'tmp/')).toEqual([]);
      expect(await listAll(store, '')).toEqual(['keep/1', 'tmpfile']);
    });

    it('handles concurrent puts of distinct keys', async () => {
      const keys = Array.from({ length: 40 }, (_, index) => `parallel/${index}`);
      await Promise.all(keys.map((key) => store.put(key, text(`value ${key}`))));
      const bodies = await Promise.all(keys.map(async (key) => new TextDecoder().decode((await store.get(key))?.body)));
      expect(bodies).toEqual(keys.map((key) => `value ${key}`));
      expect((await listAll(store, 'parallel/')).length).toBe(40);
    });

    it('puts many objects in one call: new ones, an overwrite and an empty one, each readable as put', async () => {
      await store.put('many/0', text('old value'));
      // More than the fs driver's threads take file by file, so its one-sync path is the one tested.
      const keys = Array.from({ length: 300 }, (_, index) => `many/${index}`);
      const bodies = keys.map((key, index) => (index === 7 ? new Uint8Array() : text(`value of ${key}`)));
      await putMany(
        store,
        keys.map((key, index) => ({ key, body: bodies[index]! })),
      );
      // The caller's buffers are its own again once the call has ended.
      bodies[1]!.fill(0);
      expect(await listAll(store, 'many/')).toEqual([...keys].sort());
      const read = await Promise.all(keys.map((key) => store.get(key)));
      expect(read.map((object) => new TextDecoder().decode(object?.body))).toEqual(
        keys.map((key, index) => (index === 7 ? '' : `value of ${key}`)),
      );
      for (const [index, key] of keys.entries()) {
        const head = await store.head(key);
        expect(head).toMatchObject({ key, size: read[index]!.size, etag: read[index]!.etag });
      }
      await putMany(store, []);
    });

    it.skipIf(!conditionalWrites)('ifNoneMatch "*" creates a missing object and refuses an existing one', async () => {
      const created = await store.put('once', text('first'), { ifNoneMatch: '*' });
      await expect(store.put('once', text('second'), { ifNoneMatch: '*' })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      expect((await store.get('once'))?.etag).toBe(created.etag);
      expect(new TextDecoder().decode((await store.get('once'))?.body)).toBe('first');
    });

    it.skipIf(!conditionalWrites)('ifMatch writes with the current etag and refuses a stale one', async () => {
      const first = await store.put('versioned', text('v1'));
      const second = await store.put('versioned', text('v2'), { ifMatch: first.etag });
      await expect(store.put('versioned', text('v3'), { ifMatch: first.etag })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      expect(new TextDecoder().decode((await store.get('versioned'))?.body)).toBe('v2');
      await expect(store.put('absent', text('x'), { ifMatch: second.etag })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      );
      expect(await store.head('absent')).toBeUndefined();
    });

    it.skipIf(!conditionalWrites)('lets exactly one of several racing ifNoneMatch writers win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, index) => store.put('race', text(`writer ${index}`), { ifNoneMatch: '*' })),
      );
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(PreconditionFailedError);
      }
    });
  });
}

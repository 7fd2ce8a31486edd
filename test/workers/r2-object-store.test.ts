// Runs the ObjectStore contract against the R2 driver on an R2 binding inside workerd.

import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { deletePrefix } from '../../src/storage/object-store.ts';
import { R2ObjectStore } from '../../src/storage/r2-object-store.ts';
import { describeObjectStoreContract } from '../storage/object-store-contract.ts';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** The tests of a file share one bucket, so each starts from an empty one. */
async function emptyStore(): Promise<R2ObjectStore> {
  const store = new R2ObjectStore(env.BUCKET);
  await deletePrefix(store, '');
  return store;
}

describeObjectStoreContract('r2 (workerd)', async () => {
  const store = await emptyStore();
  return { store, teardown: async () => void (await deletePrefix(store, '')) };
});

describe('R2ObjectStore', () => {
  it('accepts a list limit above the 1000 keys R2 allows per page', async () => {
    const store = await emptyStore();
    await Promise.all(['big/1', 'big/2', 'big/3'].map((key) => store.put(key, text(key))));
    const page = await store.list('big/', { limit: 5000 });
    expect(page.objects.map((object) => object.key)).toEqual(['big/1', 'big/2', 'big/3']);
    expect(page.cursor).toBeUndefined();
  });

  it('deletes more objects under a prefix than fit in one page', async () => {
    const store = await emptyStore();
    const keys = Array.from({ length: 1001 }, (_, index) => `many/${String(index).padStart(4, '0')}`);
    await Promise.all(keys.map((key) => store.put(key, text(key))));
    const first = await store.list('many/');
    expect(first.objects).toHaveLength(1000);
    expect(first.cursor).toBeDefined();
    expect(await deletePrefix(store, 'many/')).toBe(1001);
    expect((await store.list('many/')).objects).toEqual([]);
  });
});

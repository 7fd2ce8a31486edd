// The blob sweeper's rules on their own, with a clock it is given: the grace counts from when a
// blob was first found unreferenced, a blob referenced again starts over, and a reference made
// while a sweep runs (a commit landing before the delete) keeps its blob.
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { BlobStore } from '../../src/workspace/blob-store.ts';
import { BlobSweeper, type StoreState } from '../../src/workspace/blob-sweeper.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

function setup(objects = new MemoryObjectStore()) {
  let now = 1_000_000;
  let live = new Set<string>();
  let key = 0;
  const blobs = new BlobStore(objects, undefined, undefined, 0);
  const state = (): StoreState => ({ key: String(key), live: () => new Set(live) });
  const sweeper = new BlobSweeper(SqliteDatabase.memory(), objects, blobs, state, () => now);
  return {
    objects,
    blobs,
    sweeper,
    advance: (ms: number) => (now += ms),
    refer: (hashes: string[]) => {
      live = new Set(hashes);
      key += 1;
    },
  };
}

const stored = async (objects: MemoryObjectStore) => (await objects.list('ws/s/blobs/')).objects.length;

describe('the blob sweeper', () => {
  it('deletes a blob once it has stayed unreferenced for the grace, counted from when it was first found so', async () => {
    const { objects, blobs, sweeper, advance, refer } = setup();
    const kept = await blobs.put('s', bytes('kept'));
    const dropped = await blobs.put('s', bytes('dropped'));
    refer([kept]);
    await sweeper.sweep(['s'], 1000);
    advance(999);
    expect((await sweeper.sweep(['s'], 1000)).deleted).toBe(0);
    // Referenced again, then dropped again: the grace starts over.
    refer([kept, dropped]);
    await sweeper.sweep(['s'], 1000);
    refer([kept]);
    advance(1);
    await sweeper.sweep(['s'], 1000);
    advance(999);
    expect((await sweeper.sweep(['s'], 1000)).deleted).toBe(0);
    advance(1);
    expect(await sweeper.sweep(['s'], 1000)).toMatchObject({ examined: 2, deleted: 1 });
    expect(await stored(objects)).toBe(1);
    expect(new TextDecoder().decode(await blobs.get('s', kept))).toBe('kept');
  });

  it('deletes nothing of a store that stopped being its own meanwhile (a fork in another database shares it now)', async () => {
    const { objects, blobs, sweeper, refer, advance } = setup();
    await blobs.put('s', bytes('unreferenced here'));
    refer([]);
    await sweeper.sweep(['s'], 1000);
    advance(1000);
    expect((await sweeper.sweep(['s'], 1000, () => false)).deleted).toBe(0);
    expect(await stored(objects)).toBe(1);
  });

  it('asks again, in turn with the writes, before deleting: a blob named meanwhile is kept', async () => {
    const objects = new MemoryObjectStore();
    const blobs = new BlobStore(objects, undefined, undefined, 0);
    const garbage = await blobs.put('s', bytes('garbage'));
    const named = await blobs.put('s', bytes('named by a commit meanwhile'));
    // Every ask finds the store changed; from the third ask on (the asks in turn with the writes,
    // after one per listed blob) a commit has named `named`.
    let asks = 0;
    let changes = 0;
    const state = (): StoreState => ({
      key: String(changes++),
      live: () => (++asks > 2 ? new Set([named]) : new Set()),
    });
    const sweeper = new BlobSweeper(SqliteDatabase.memory(), objects, blobs, state);
    expect(await sweeper.sweep(['s'], 0)).toMatchObject({ examined: 2, deleted: 1 });
    expect(asks).toBeGreaterThan(2);
    await expect(blobs.get('s', garbage)).rejects.toThrow(/missing/);
    expect(new TextDecoder().decode(await blobs.get('s', named))).toBe('named by a commit meanwhile');
  });

  it('keeps a blob written for a commit in flight until it is released', async () => {
    const { objects, blobs, sweeper, refer } = setup();
    const { hash, release } = await blobs.putForCommit('s', bytes('in flight'));
    refer([]);
    expect((await sweeper.sweep(['s'], 0)).deleted).toBe(0);
    release();
    expect((await sweeper.sweep(['s'], 0)).deleted).toBe(1);
    expect(await stored(objects)).toBe(0);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

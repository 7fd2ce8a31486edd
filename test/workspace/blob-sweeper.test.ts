// The blob sweeper's rules on their own, with a clock it is given: the grace counts from when a
// blob was first found unreferenced, a blob referenced again starts over, and references made
// while a sweep runs (a commit landing between the listing and the delete) keep their blob.
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

  it('keeps a blob a commit names while the sweep is under way', async () => {
    let commit = () => {};
    // A commit lands while the sweeper deletes its first blob, naming the blob it will come to last.
    class Deleting extends MemoryObjectStore {
      override async delete(key: string): Promise<void> {
        commit();
        commit = () => {};
        await super.delete(key);
      }
    }
    const { objects, blobs, sweeper, refer } = setup(new Deleting());
    const hashes = [];
    for (const text of ['one', 'two', 'three']) hashes.push(await blobs.put('s', bytes(text)));
    const last = (await objects.list('ws/s/blobs/')).objects.at(-1)!.key.split('/').at(-1)!;
    refer([]);
    commit = () => refer([last]);
    expect(await sweeper.sweep(['s'], 0)).toMatchObject({ examined: 3, deleted: 2 });
    expect((await objects.list('ws/s/blobs/')).objects.map((object) => object.key.split('/').at(-1))).toEqual([last]);
    expect(hashes).toContain(last);
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

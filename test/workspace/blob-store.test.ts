// Contents stored as a set: each kept from the sweeper from before it is claimed until it is
// stored (and for the keep time after), equal contents written once, a claim waited for first.
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import type { ObjectInfo, PutOptions } from '../../src/storage/object-store.ts';
import { BlobStore } from '../../src/workspace/blob-store.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A store whose writes wait until `open` is called, noting the keys written. */
class GatedObjectStore extends MemoryObjectStore {
  readonly written: string[] = [];
  open!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.open = resolve));
  /** Resolves once a write has reached the gate. */
  arrived!: () => void;
  readonly reached = new Promise<void>((resolve) => (this.arrived = resolve));

  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<ObjectInfo> {
    this.arrived();
    await this.gate;
    this.written.push(key);
    return super.put(key, body, options);
  }
}

describe('BlobStore.putMany', () => {
  it('pins every content before claiming it, writes equal contents once, and answers the ids in order', async () => {
    const objects = new GatedObjectStore();
    const claims: { hash: string; pinned: boolean }[] = [];
    const blobs: BlobStore = new BlobStore(objects, undefined, undefined, 0, (store, hash) => {
      claims.push({ hash, pinned: blobs.isPinned(store, hash) });
      return undefined;
    });
    const storing = blobs.putMany('s', [bytes('a'), bytes('b'), bytes('a')]);
    // Written only once the gate opens: meanwhile every content is kept from the sweeper.
    await objects.reached;
    expect(claims).toHaveLength(2);
    expect(claims.every((claim) => claim.pinned)).toBe(true);
    expect(objects.written).toEqual([]);
    objects.open();
    const hashes = await storing;
    expect(hashes).toHaveLength(3);
    expect(hashes[0]).toBe(hashes[2]);
    expect(claims.map((claim) => claim.hash)).toEqual([hashes[0], hashes[1]]);
    expect(objects.written).toHaveLength(2);
    // The keep time is 0 here: once stored, nothing holds them.
    expect(blobs.isPinned('s', hashes[0]!)).toBe(false);
    expect(new TextDecoder().decode(await blobs.get('s', hashes[1]!))).toBe('b');
  });

  it('waits for a claim (a family sweep deleting the content) before writing, and fails the set when it fails', async () => {
    const objects = new GatedObjectStore();
    objects.open();
    let deleted!: () => void;
    let asked!: () => void;
    const claimedAt = new Promise<void>((resolve) => (asked = resolve));
    const claimed = new Promise<void>((resolve) => (deleted = resolve));
    const blobs = new BlobStore(objects, undefined, undefined, 0, () => {
      asked();
      return claimed;
    });
    const storing = blobs.putMany('s', [bytes('doomed')]);
    await claimedAt;
    // A turn of the event loop: a write that did not wait for the claim would be noted by now.
    await new Promise((resolve) => setImmediate(resolve));
    expect(objects.written).toEqual([]);
    deleted();
    const [hash] = await storing;
    expect(objects.written).toHaveLength(1);
    expect(new TextDecoder().decode(await blobs.get('s', hash!))).toBe('doomed');

    const refused = new BlobStore(objects, undefined, undefined, 0, () => Promise.reject(new Error('family gone')));
    await expect(refused.putMany('s', [bytes('other')])).rejects.toThrow('family gone');
    expect(objects.written).toHaveLength(1);
  });
});

describe('BlobStore.putMany and the cache', () => {
  it('caches contents that own their buffer, not views of a larger one (an archive kept alive by one cached file)', async () => {
    const blobs = new BlobStore(new MemoryObjectStore());
    const archive = bytes('first|second');
    const [own, view] = await blobs.putMany('s', [bytes('alone'), archive.subarray(6)]);
    expect(blobs.cached('s', own!)).toEqual(bytes('alone'));
    expect(blobs.cached('s', view!)).toBeUndefined();
    // Still stored: read from the object store when asked.
    expect(new TextDecoder().decode(await blobs.get('s', view!))).toBe('second');
  });
});

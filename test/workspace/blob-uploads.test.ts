// Blobs uploaded in pieces: staged in the object store until whole, stored only under their true
// SHA-256, and staging that no job can finish is removed.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { BlobStore } from '../../src/workspace/blob-store.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bytes = (text: string) => new TextEncoder().encode(text);

function setUp() {
  const objects = new MemoryObjectStore();
  const blobs = new BlobStore(objects);
  const keys = async (prefix: string) => (await objects.list(prefix)).objects.map((object) => object.key);
  return { blobs, uploads: blobs.uploads('uid1'), keys };
}

describe('BlobUploads', () => {
  it('stores the blob once the last piece is in, and keeps no staging after', async () => {
    const { blobs, uploads, keys } = setUp();
    const hash = sha256('hello, world');
    expect(await uploads.receive({ owner: 'p1', hash, size: 12, offset: 0, bytes: bytes('hello') })).toEqual({
      received: 5,
      complete: false,
    });
    expect(await blobs.size('uid1', hash)).toBeUndefined();
    expect(await uploads.receive({ owner: 'p1', hash, size: 12, offset: 5, bytes: bytes(', world') })).toEqual({
      received: 12,
      complete: true,
    });
    expect(new TextDecoder().decode(await blobs.get('uid1', hash))).toBe('hello, world');
    expect(await keys('ws/uid1/uploads/')).toEqual([]);
  });

  it('stores nothing, and drops the staging, when the whole does not hash to its id', async () => {
    const { blobs, uploads, keys } = setUp();
    const hash = sha256('what was promised');
    await uploads.receive({ owner: 'p1', hash, size: 8, offset: 0, bytes: bytes('some') });
    await expect(
      uploads.receive({ owner: 'p1', hash, size: 8, offset: 4, bytes: bytes('else') }),
    ).rejects.toMatchObject({ code: 'invalid_argument' });
    expect(await blobs.size('uid1', hash)).toBeUndefined();
    expect(await keys('ws/uid1/')).toEqual([]);
  });

  it('removes the staging of jobs that can upload no more, and of a job whose sync is done', async () => {
    const { uploads, keys } = setUp();
    for (const owner of ['ended', 'running'])
      await uploads.receive({ owner, hash: sha256(owner), size: 10, offset: 0, bytes: bytes('part') });
    await uploads.discardAbandoned((owner) => owner === 'running');
    expect(await keys('ws/uid1/uploads/')).toEqual([`ws/uid1/uploads/running/${sha256('running')}/000000000000000`]);
    await uploads.discard('running');
    expect(await keys('ws/uid1/uploads/')).toEqual([]);
  });
});

// An archive read as its bytes arrive: each entry is acted on once its bytes are there (its
// content stored, a refusal known at once), the reading waits for the rest, and an archive cut
// short or ended by its sender changes nothing.
import { describe, expect, it } from 'vitest';
import { BytesArriving } from '../../src/core/arriving-bytes.ts';
import { isToolError } from '../../src/core/errors.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { MAX_ARCHIVE_ENTRIES, unpackArchive } from '../../src/workspace/archive-unpack.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';
import { tarBytes } from '../support/tar-bytes.ts';

const limits = { maxFileBytes: 1024 * 1024, maxEntries: MAX_ARCHIVE_ENTRIES };

function setup() {
  const objects = new MemoryObjectStore();
  const workspaces = new Workspaces(SqliteDatabase.memory(), objects);
  workspaces.create('ws');
  return { workspace: workspaces.open('ws'), workspaces };
}

/** Whether `promise` has settled by the time the event loop has turned a few times. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** A body of `tar`'s length, of which the first `count` bytes have arrived. */
function arrivingFirst(tar: Uint8Array, count: number): BytesArriving {
  const body = new BytesArriving(tar.byteLength);
  body.receive(tar.subarray(0, count));
  return body;
}

describe('unpackArchive over bytes still arriving', () => {
  it('reads the entries that have arrived, waits for the rest, and gives every entry once they come', async () => {
    const { workspace } = setup();
    const tar = tarBytes([
      { name: 'a.txt', content: 'first\n' },
      { name: 'd/b.txt', content: 'x'.repeat(3000) },
      { name: 'c.txt', content: 'last\n' },
    ]);
    // a.txt's header and content, and b.txt's header: b's content is still to come.
    const body = arrivingFirst(tar, 2048);
    const unpacked = unpackArchive(workspace, body, '', limits);
    expect(await settledSoon(unpacked)).toBe(false);
    body.receive(tar.subarray(2048, 4096));
    expect(await settledSoon(unpacked)).toBe(false);
    body.receive(tar.subarray(4096));
    const archive = await unpacked;
    expect([...archive.entries.keys()]).toEqual(['a.txt', 'd/b.txt', 'c.txt']);
    await archive.contents.settled;
    const a = archive.entries.get('a.txt');
    expect(a?.type === 'file' && new TextDecoder().decode(await workspace.blob(a.blob))).toBe('first\n');
  });

  it('refuses a hostile entry as soon as it has arrived, without waiting for the rest', async () => {
    const { workspace } = setup();
    const tar = tarBytes([
      { name: 'fine.txt', content: 'fine' },
      { name: '../x', content: 'x' },
      { name: 'big.bin', content: new Uint8Array(200_000) },
    ]);
    const body = arrivingFirst(tar, 2048);
    const refused = unpackArchive(workspace, body, '', limits).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(await settledSoon(refused)).toBe(true);
    const error = await refused;
    expect(isToolError(error) && [error.code, error.details?.entry]).toEqual(['path_outside_workspace', '../x']);
    expect(body.complete).toBe(false);
  });

  it('refuses a file over the limit once its header arrives, and a body its sender ended, changing nothing', async () => {
    const { workspace, workspaces } = setup();
    const before = workspaces.info('ws');
    const huge = tarBytes([{ name: 'huge.bin', content: new Uint8Array(2 * 1024 * 1024) }]);
    const early = unpackArchive(workspace, arrivingFirst(huge, 512), '', limits).catch((error: unknown) => error);
    expect(await settledSoon(early)).toBe(true);
    expect(isToolError(await early) && (await early)).toMatchObject({ code: 'payload_too_large' });

    const tar = tarBytes([
      { name: 'a.txt', content: 'a' },
      { name: 'b.txt', content: 'b'.repeat(5000) },
    ]);
    const body = arrivingFirst(tar, 1536);
    const cut = unpackArchive(workspace, body, '', limits).catch((error: unknown) => error);
    expect(await settledSoon(cut)).toBe(false);
    body.fail(new Error('The connection closed before the request body was received.'));
    expect(await cut).toMatchObject({ message: expect.stringContaining('connection closed') });
    expect(workspaces.info('ws')).toEqual(before);
    expect(workspace.entry('a.txt')).toBeUndefined();
  });

  it('judges an archive cut short by its declared length, not by waiting', async () => {
    const { workspace } = setup();
    const tar = tarBytes([{ name: 'a.txt', content: 'a'.repeat(2000) }]);
    // The body declares only part of the archive: all of it has arrived, and it ends inside a.txt.
    const short = tar.subarray(0, 1024);
    const body = arrivingFirst(short, short.byteLength);
    await expect(unpackArchive(workspace, body, '', limits)).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('truncated'),
    });
  });
});

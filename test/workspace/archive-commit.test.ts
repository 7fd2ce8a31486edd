// An archive's commit against contents still being made durable: it lands once they are (within
// its transaction, before they are heard of otherwise), or waits for them and lands after; it never
// lands when their write failed, and another commit of the same turn lands either way.
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { commitArchive } from '../../src/workspace/archive-commit.ts';
import type { ArchiveContents, ArchivedEntry } from '../../src/workspace/archive-unpack.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

async function setup() {
  const workspaces = new Workspaces(SqliteDatabase.memory(), new MemoryObjectStore());
  workspaces.create('ws');
  const workspace = workspaces.open('ws');
  const [blob] = await workspace.storeBlobs([bytes('archived\n')]);
  const entries = new Map<string, ArchivedEntry>([
    ['d', { type: 'dir' }],
    ['d/a.txt', { type: 'file', size: 9, blob: blob! }],
  ]);
  return { workspaces, workspace, entries };
}

/** Contents whose durability the test decides: `durableNow` answers `now`, `settled` when the test says. */
function contents(now: boolean) {
  let settle!: () => void;
  let fail!: (error: Error) => void;
  const settled = new Promise<void>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  settled.catch(() => undefined);
  const asked: number[] = [];
  const value: ArchiveContents = {
    settled,
    blobsKnown: () => true,
    durableNow: (timeoutMs) => {
      asked.push(timeoutMs);
      return now;
    },
  };
  return { value, settle, fail, asked };
}

describe('commitArchive with contents being made durable', () => {
  it('lands as soon as its transaction finds them durable, before the store has settled', async () => {
    const { workspace, workspaces, entries } = await setup();
    const durable = contents(true);
    const committed = await commitArchive(workspace, entries, '', 'merge', durable.value);
    expect(durable.asked).toHaveLength(1);
    expect(committed.version).toBe(workspaces.info('ws')!.version);
    expect(workspace.entry('d/a.txt')).toMatchObject({ type: 'file', size: 9 });
  });

  it('rolls back while they are not durable, and lands once they have settled', async () => {
    const { workspace, workspaces, entries } = await setup();
    const before = workspaces.info('ws')!.version;
    const pending = contents(false);
    let landed = false;
    const committed = commitArchive(workspace, entries, '', 'merge', pending.value).then((result) => {
      landed = true;
      return result;
    });
    await expect.poll(() => pending.asked.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Rolled back: nothing of it is there until the contents are durable.
    expect([landed, workspace.entry('d/a.txt'), workspaces.info('ws')!.version]).toEqual([false, undefined, before]);
    pending.settle();
    expect((await committed).version).toBe(before + 1);
    expect(workspace.entry('d/a.txt')).toMatchObject({ type: 'file' });
    // Once settled, the commit does not ask again.
    expect(pending.asked).toHaveLength(1);
  });

  it('never lands when their write failed, and a commit of the same turn lands all the same', async () => {
    const { workspace, workspaces, entries } = await setup();
    const before = workspaces.info('ws')!.version;
    const failing = contents(false);
    // Both in one turn: they share one transaction, the archive's in a savepoint of its own.
    const archive = commitArchive(workspace, entries, '', 'merge', failing.value);
    const other = workspace.commit([{ op: 'write', path: 'other.txt', content: bytes('other') }]);
    await other;
    await expect.poll(() => failing.asked.length).toBe(1);
    failing.fail(new Error('the disk is full'));
    await expect(archive).rejects.toThrow('the disk is full');
    expect(workspace.entry('d/a.txt')).toBeUndefined();
    expect(workspace.entry('d')).toBeUndefined();
    expect(workspace.entry('other.txt')).toMatchObject({ type: 'file' });
    expect(workspaces.info('ws')!.version).toBe(before + 1);
  });
});

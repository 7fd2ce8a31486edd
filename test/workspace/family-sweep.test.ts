// The family sweep of a store shared by workspaces in several databases (workspace/family-sweep.ts),
// with real Workspaces databases as its readers: calls between them are direct here, where the
// Cloudflare home sends them between objects (test/workers/family-sweep.test.ts runs it there).
// What a reader about to name a doomed content does, and every reason a round deletes nothing.
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { SqlDatabase } from '../../src/storage/sql-database.ts';
import { FamilySweep, type FamilyReader } from '../../src/workspace/family-sweep.ts';
import type { StoreFamilies } from '../../src/workspace/store-families.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

async function sha256(content: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes(content));
  return Buffer.from(digest).toString('hex');
}

/** An object store whose batch deletes can be held up, to put a reader's write in the middle of one. */
class HeldObjectStore extends MemoryObjectStore {
  beforeDelete: (() => Promise<void>) | undefined;
  override async deleteMany(keys: readonly string[]): Promise<void> {
    const hold = this.beforeDelete;
    this.beforeDelete = undefined;
    await hold?.();
    await super.deleteMany(keys);
  }
}

/** Two databases reading one store: `ws` in the first, its fork `copy` in the second, and the family that sweeps it. */
async function family(options: { graceMs?: number; now?: () => number } = {}) {
  const objects = new HeldObjectStore();
  const familyDb = SqliteDatabase.memory();
  const readers: FamilyReader[] = [];
  const families: StoreFamilies = {
    join: async (_store, joining) => {
      for (const { uid, workspace } of joining)
        if (!readers.some((reader) => reader.uid === uid))
          readers.push({ uid, workspace, joinedAt: (options.now ?? Date.now)() });
      sweep.joined();
    },
    leave: async (_store, uid) => {
      readers.splice(
        readers.findIndex((reader) => reader.uid === uid),
        1,
      );
    },
    changed: async () => {},
    rescue: (_store, hash) => sweep.rescue(hash),
  };
  const dbs = new Map<string, SqlDatabase>([
    ['ws', SqliteDatabase.memory()],
    ['copy', SqliteDatabase.memory()],
  ]);
  const databases = new Map<string, Workspaces>();
  const open = (name: string) => {
    const workspaces = new Workspaces(dbs.get(name)!, objects, { families });
    databases.set(name, workspaces);
    return workspaces;
  };
  /** Hooks run inside a reader's answer, after it is computed: what races a round. */
  const afterCheck = new Map<string, () => Promise<void>>();
  const sweep = new FamilySweep(
    familyDb,
    objects,
    {
      check: async (reader, question) => {
        const answer = databases
          .get(reader.workspace)!
          .sharedStores.check(question.store, reader.uid, question.round, question.hashes, question.doom);
        const hook = afterCheck.get(reader.workspace);
        afterCheck.delete(reader.workspace);
        await hook?.();
        return answer;
      },
      release: async (reader, store, hashes) => databases.get(reader.workspace)!.sharedStores.release(store, hashes),
    },
    { graceMs: options.graceMs ?? 0, absentAfterMs: 60_000, ...(options.now ? { now: options.now } : {}) },
  );
  const source = open('ws');
  const target = open('copy');
  source.create('ws');
  await source.open('ws').commit([{ op: 'write', path: 'f', content: bytes('shared') }]);
  const { uid, store } = source.forkTransfer.forkSource('ws');
  const forkUid = crypto.randomUUID();
  await source.forkTransfer.joinStoreFamily(store, [
    { uid, workspace: 'ws' },
    { uid: forkUid, workspace: 'copy' },
  ]);
  const snapshot = source.forkTransfer.forkSnapshot('ws');
  await target.forkTransfer.beginReceivingFork('copy', forkUid, store);
  target.forkTransfer.receiveForkEntries(forkUid, snapshot.entries);
  target.forkTransfer.adoptFork('copy', forkUid, snapshot.workspace);
  const write = (name: string, path: string, content: string) =>
    databases
      .get(name)!
      .open(name)
      .commit([{ op: 'write', path, content: bytes(content) }]);
  const read = async (name: string, path: string) => {
    const workspace = databases.get(name)!.open(name);
    return text(await workspace.readBytes(path, workspace.entry(path)!));
  };
  const isStored = async (content: string) => {
    const hash = await sha256(content);
    return (await objects.head(`ws/${store}/blobs/${hash.slice(0, 2)}/${hash}`)) !== undefined;
  };
  return {
    /** Both sides write over 'f', so 'shared' is a content no reader needs. */
    dropShared: async () => {
      await write('ws', 'f', 'source moved on');
      await write('copy', 'f', 'fork moved on');
    },
    objects,
    store,
    readers,
    sweep: () => sweep.sweep(store, readers),
    familySweep: () => sweep,
    write,
    read,
    isStored,
    afterCheck,
    reopen: open,
    databases,
    dbs,
  };
}

describe('the family sweep of a shared store', () => {
  it('deletes, a round after finding them, the contents no reader needs, and keeps what any reader names', async () => {
    const f = await family();
    await f.write('ws', 'f', 'source moved on');
    await f.write('copy', 'g', 'written in the fork');
    await f.write('copy', 'g', 'the fork moved on');
    expect(await f.sweep()).toMatchObject({ deleted: 0, gone: [] });
    expect(await f.sweep()).toMatchObject({ deleted: 1, gone: [] });
    expect(await f.isStored('written in the fork')).toBe(false);
    // 'shared' is the fork's still; the rest is one reader's each.
    for (const content of ['shared', 'source moved on', 'the fork moved on'])
      expect(await f.isStored(content)).toBe(true);
    expect(await f.read('copy', 'f')).toBe('shared');
    expect(await f.read('ws', 'f')).toBe('source moved on');
  });

  it('waits out the grace: a content is deleted only once it has stayed unneeded for graceMs', async () => {
    let now = 1_000_000;
    const f = await family({ graceMs: 5_000, now: () => now });
    await f.dropShared();
    await f.sweep();
    now += 4_999;
    expect(await f.sweep()).toMatchObject({ deleted: 0 });
    expect(f.familySweep().nextDue()).toBe(1_000_000 + 5_000);
    now += 1;
    expect(await f.sweep()).toMatchObject({ deleted: 1 });
    expect(await f.isStored('shared')).toBe(false);
  });

  it('keeps a doomed content a reader writes again while the round asks the others', async () => {
    const f = await family();
    await f.dropShared();
    await f.sweep();
    // The next round dooms 'shared'; after the fork answers it does not need it, the source writes it again.
    f.afterCheck.set('copy', async () => {
      await f.write('ws', 'again', 'shared');
    });
    expect(await f.sweep()).toMatchObject({ deleted: 0 });
    expect(await f.isStored('shared')).toBe(true);
    expect(await f.read('ws', 'again')).toBe('shared');
  });

  it('makes a reader writing a content whose delete is under way wait for it, then store it again', async () => {
    const f = await family();
    await f.dropShared();
    await f.sweep();
    let writing: Promise<unknown> | undefined;
    f.objects.beforeDelete = async () => {
      writing = f.write('copy', 'back', 'shared');
      // Time for the write to land first, were it not made to wait for the delete.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    expect(await f.sweep()).toMatchObject({ deleted: 1 });
    await writing;
    expect(await f.isStored('shared')).toBe(true);
    expect(await f.read('copy', 'back')).toBe('shared');
  });

  it('makes a runner naming a doomed content by its id (no upload) find it gone, never a stale copy in memory', async () => {
    const f = await family();
    await f.dropShared();
    await f.sweep();
    const hash = await sha256('shared');
    let size: Promise<number | undefined> | undefined;
    f.objects.beforeDelete = async () => {
      size = f.databases.get('copy')!.open('copy').blobSize(hash);
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    expect(await f.sweep()).toMatchObject({ deleted: 1 });
    // The lookup waited for the delete: it says the content is not stored, so the runner uploads it.
    expect(await size).toBeUndefined();
  });

  it('leaves every reachable content when a sweep dies in its delete, and the next sweep finishes the work', async () => {
    const f = await family();
    for (let i = 0; i < 5; i++) await f.write('ws', 'f', `source version ${i}`);
    await f.write('copy', 'f', 'fork moved on');
    await f.sweep();
    f.objects.beforeDelete = async () => {
      throw new Error('the sweeping object was evicted');
    };
    await expect(f.sweep()).rejects.toThrow(/evicted/);
    expect(await f.read('ws', 'f')).toBe('source version 4');
    expect(await f.read('copy', 'f')).toBe('fork moved on');
    // A content the dead round doomed, written again: the next round keeps it.
    await f.write('copy', 'g', 'source version 1');
    expect(await f.sweep()).toMatchObject({ deleted: 4 });
    for (const content of ['source version 4', 'fork moved on', 'source version 1'])
      expect(await f.isStored(content)).toBe(true);
  });

  it('remembers doomed contents across a restart of the reader: a write after it still asks the family', async () => {
    const f = await family();
    await f.dropShared();
    await f.sweep();
    f.afterCheck.set('copy', async () => {
      // The source restarts (a new Workspaces on its database) after answering, then writes the content.
      f.reopen('ws');
      await f.write('ws', 'again', 'shared');
    });
    expect(await f.sweep()).toMatchObject({ deleted: 0 });
    expect(await f.read('ws', 'again')).toBe('shared');
  });

  it('deletes nothing in a round a fork joins during, or while a fork is arriving', async () => {
    const f = await family();
    await f.dropShared();
    await f.sweep();
    f.afterCheck.set('copy', () =>
      f.databases.get('ws')!.forkTransfer.joinStoreFamily(f.store, [{ uid: crypto.randomUUID(), workspace: 'copy' }]),
    );
    // The reader just joined is not known to its database yet: it may arrive with rows naming anything.
    expect(await f.sweep()).toMatchObject({ deleted: 0, stopped: 'fork joined' });
    expect(await f.sweep()).toMatchObject({ deleted: 0, stopped: 'fork arriving' });
    expect(await f.isStored('shared')).toBe(true);
  });

  it('takes a reader its database does not know long after it joined as gone, and sweeps on', async () => {
    let now = 1_000_000;
    const f = await family({ now: () => now });
    await f.dropShared();
    await f.databases.get('ws')!.forkTransfer.joinStoreFamily(f.store, [{ uid: 'never-began', workspace: 'copy' }]);
    expect(await f.sweep()).toMatchObject({ stopped: 'fork arriving' });
    now += 60_000;
    const first = await f.sweep();
    expect(first).toMatchObject({ gone: ['never-began'] });
    expect(first.stopped).toBeUndefined();
  });

  it('drops a fork that stopped arriving long ago when asked about it, and refuses to adopt it after', async () => {
    const f = await family();
    const copy = f.databases.get('copy')!;
    const uid = crypto.randomUUID();
    await copy.forkTransfer.joinStoreFamily(f.store, [{ uid, workspace: 'copy' }]);
    await copy.forkTransfer.beginReceivingFork('late', uid, f.store);
    expect(copy.sharedStores.check(f.store, uid, 1, [], [])).toEqual({ reader: 'receiving', needed: [] });
    // Its sender died eleven minutes ago (the row's start time is what the reader goes by).
    f.dbs
      .get('copy')!
      .query(
        'UPDATE pending_forks SET created_at = ? WHERE uid = ?',
        new Date(Date.now() - 11 * 60_000).toISOString(),
        uid,
      );
    expect(copy.sharedStores.check(f.store, uid, 1, [], [])).toEqual({ reader: 'absent', needed: [] });
    expect(() =>
      copy.forkTransfer.adoptFork('late', uid, { store: f.store, settings: '{}', version: 0, files: 0, bytes: 0 }),
    ).toThrow(/Another fork/);
  });

  it('deletes nothing of a family with a reader recorded before names were kept', async () => {
    const f = await family();
    await f.dropShared();
    f.readers.push({ uid: 'old', workspace: null, joinedAt: 0 });
    expect(await f.sweep()).toMatchObject({ stopped: 'readers without names' });
    expect(await f.sweep()).toMatchObject({ stopped: 'readers without names' });
    expect(await f.isStored('shared')).toBe(true);
  });
});

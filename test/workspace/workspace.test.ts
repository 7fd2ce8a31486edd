// The virtual workspace: atomic multi-file commits, versions, conditions, and cost independent of size.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { deletePrefix } from '../../src/storage/object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { SqlDatabase, SqlValue } from '../../src/storage/sql-database.ts';
import { DEFAULT_VIEW_ENTRIES } from '../../src/workspace/entry-cache.ts';
import type { StoreFamilies } from '../../src/workspace/store-families.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

function setup(db: SqlDatabase = SqliteDatabase.memory()) {
  const objects = new MemoryObjectStore();
  const workspaces = new Workspaces(db, objects);
  workspaces.create('ws');
  return { db, objects, workspaces, workspace: workspaces.open('ws') };
}

async function expectToolError(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toSatisfy((error) => error instanceof ToolError && error.code === code);
}

describe('commits', () => {
  it('commit several files atomically: a failing precondition leaves every file as it was', async () => {
    const { workspace, workspaces } = setup();
    const first = await workspace.commit([
      { op: 'write', path: 'a.txt', content: bytes('a1') },
      { op: 'write', path: 'b.txt', content: bytes('b1') },
    ]);
    await expectToolError(
      workspace.commit([
        { op: 'write', path: 'a.txt', content: bytes('a2') },
        { op: 'write', path: 'c/new.txt', content: bytes('c') },
        { op: 'write', path: 'b.txt', content: bytes('b2'), expect: { version: first.version - 1 } },
      ]),
      'conflict',
    );
    const a = workspace.entry('a.txt')!;
    expect(new TextDecoder().decode(await workspace.readBytes('a.txt', a))).toBe('a1');
    expect(workspace.entry('c')).toBeUndefined();
    expect(workspace.entry('c/new.txt')).toBeUndefined();
    expect(workspaces.info('ws')).toMatchObject({ files: 2, bytes: 4, version: first.version });
  });

  it('gives every write a new version, and a stale expectation is a conflict', async () => {
    const { workspace } = setup();
    const one = await workspace.commit([{ op: 'write', path: 'f', content: bytes('x') }]);
    const two = await workspace.commit([
      { op: 'write', path: 'f', content: bytes('x'), expect: { version: one.version } },
    ]);
    expect(two.version).toBeGreaterThan(one.version);
    expect(workspace.formatVersion(two.version)).not.toBe(workspace.formatVersion(one.version));
    await expectToolError(
      workspace.commit([{ op: 'write', path: 'f', content: bytes('y'), expect: { version: one.version } }]),
      'conflict',
    );
    await expectToolError(
      workspace.commit([{ op: 'write', path: 'f', content: bytes('y'), expect: { absent: true } }]),
      'already_exists',
    );
  });

  it('versions of a deleted and recreated workspace never match the old ones', async () => {
    const { workspaces } = setup();
    const old = workspaces.open('ws');
    const commit = await old.commit([{ op: 'write', path: 'f', content: bytes('x') }]);
    await workspaces.delete('ws');
    workspaces.create('ws');
    const fresh = workspaces.open('ws');
    const again = await fresh.commit([{ op: 'write', path: 'f', content: bytes('x') }]);
    expect(again.version).toBe(commit.version);
    expect(fresh.parseVersion(old.formatVersion(commit.version))).toBeUndefined();
  });

  it('deletes entries, refuses to delete a non-empty directory, and keeps counts right', async () => {
    const { workspace, workspaces } = setup();
    await workspace.commit([
      { op: 'write', path: 'd/x', content: bytes('12345') },
      { op: 'mkdir', path: 'empty' },
    ]);
    await expectToolError(workspace.commit([{ op: 'delete', path: 'd' }]), 'is_directory');
    await workspace.commit([
      { op: 'delete', path: 'd/x' },
      { op: 'delete', path: 'd' },
      { op: 'delete', path: 'empty' },
    ]);
    expect(workspace.manifestEntries()).toEqual([]);
    expect(workspaces.info('ws')).toMatchObject({ files: 0, bytes: 0 });
    await expectToolError(workspace.commit([{ op: 'delete', path: 'gone' }]), 'not_found');
  });

  it('stores identical content once (content-addressed blobs)', async () => {
    const { workspace, objects } = setup();
    await workspace.commit([
      { op: 'write', path: 'one', content: bytes('same') },
      { op: 'write', path: 'two', content: bytes('same') },
    ]);
    expect((await objects.list('ws/')).objects).toHaveLength(1);
  });
});

/** Counts the SQL statements a piece of work runs. */
function countingDatabase(inner: SqlDatabase) {
  const counter = { statements: 0 };
  const db: SqlDatabase = {
    query: <R extends Record<string, SqlValue>>(sql: string, ...params: SqlValue[]) => {
      counter.statements += 1;
      return inner.query<R>(sql, ...params);
    },
    script: (sql) => inner.script(sql),
    transaction: (fn) => inner.transaction(fn),
    close: () => inner.close(),
  };
  return { db, counter };
}

describe('cost does not grow with the number of files', () => {
  it('a read and a write run the same statements in a workspace of 10 and of 20,000 files', async () => {
    const work = async (files: number) => {
      const { db, counter } = countingDatabase(SqliteDatabase.memory());
      const { workspace } = setup(db);
      const batch = Array.from({ length: files }, (_, i) => ({
        op: 'write' as const,
        path: `d${i % 100}/f${i}`,
        content: bytes(`${i}`),
      }));
      await workspace.commit(batch);
      counter.statements = 0;
      const resolved = await workspace.resolve('d7/f7', 'read');
      await workspace.readBytes(resolved.path, workspace.entry(resolved.path)!);
      await workspace.commit([{ op: 'write', path: 'd7/f7', content: bytes('changed') }]);
      return counter.statements;
    };
    expect(await work(20_000)).toBe(await work(10));
  });
});

describe('directory listings', () => {
  const names = (entries: readonly { path: string }[]) => entries.map((entry) => entry.path);

  it('are served from memory once read, and stay true through every kind of change', async () => {
    const { db, counter } = countingDatabase(SqliteDatabase.memory());
    const { workspace } = setup(db);
    await workspace.commit([
      { op: 'write', path: 'd/a', content: bytes('a') },
      { op: 'write', path: 'd/b', content: bytes('b') },
      { op: 'write', path: 'd/e/x', content: bytes('x') },
    ]);
    expect(names(workspace.entriesIn('d'))).toEqual(['d/a', 'd/b', 'd/e']);
    counter.statements = 0;
    expect(names(workspace.entriesIn('d'))).toEqual(['d/a', 'd/b', 'd/e']);
    expect(counter.statements).toBe(0);
    expect(Object.isFrozen(workspace.entriesIn('d'))).toBe(true);

    await workspace.commit([{ op: 'write', path: 'd/c', content: bytes('c') }]);
    expect(names(workspace.entriesIn('d'))).toEqual(['d/a', 'd/b', 'd/c', 'd/e']);
    expect(workspace.entriesIn('d').find((entry) => entry.path === 'd/a')?.size).toBe(1);
    await workspace.commit([{ op: 'write', path: 'd/a', content: bytes('longer') }]);
    expect(workspace.entriesIn('d').find((entry) => entry.path === 'd/a')?.size).toBe(6);
    expect(names(workspace.entriesIn('d/e'))).toEqual(['d/e/x']);
    await workspace.commit([
      { op: 'delete', path: 'd/e/x' },
      { op: 'delete', path: 'd/e' },
      { op: 'delete', path: 'd/b' },
    ]);
    expect(names(workspace.entriesIn('d'))).toEqual(['d/a', 'd/c']);
    expect(names(workspace.entriesIn('d/e'))).toEqual([]);
    await workspace.commit([{ op: 'write', path: 'd/e/y/z', content: bytes('z') }]);
    expect(names(workspace.entriesIn('d/e'))).toEqual(['d/e/y']);
    expect(names(workspace.entriesIn(''))).toEqual(['d']);
  });

  it('read the parent index, not every entry of the workspace', () => {
    const { inner, statements, db } = recordingDatabase();
    const { workspace } = setup(db);
    statements.length = 0;
    workspace.entriesIn('d');
    expect(statements).toHaveLength(1);
    const plan = inner.raw.prepare(`EXPLAIN QUERY PLAN ${statements[0]}`).all('w', 'd') as { detail: string }[];
    expect(plan.map((step) => step.detail)).toEqual([
      'SEARCH entries USING INDEX entries_by_parent (workspace=? AND parent=?)',
    ]);
  });
});

/** An in-memory SQLite database that records every statement queried through it. */
function recordingDatabase(): { inner: SqliteDatabase; statements: string[]; db: SqlDatabase } {
  const inner = SqliteDatabase.memory();
  const statements: string[] = [];
  const db: SqlDatabase = {
    query: (sql, ...params) => {
      statements.push(sql);
      return inner.query(sql, ...params);
    },
    script: (sql) => inner.script(sql),
    transaction: (fn) => inner.transaction(fn),
    close: () => inner.close(),
  };
  return { inner, statements, db };
}

describe('whether a workspace holds links (what bash asks before each auto exec)', () => {
  it('is one statement without listing the workspace, asked again only after a commit', async () => {
    const { statements, db } = recordingDatabase();
    const { workspace, workspaces } = setup(db);
    await workspace.commit([{ op: 'write', path: 'd/a.txt', content: bytes('a') }]);
    statements.length = 0;
    expect(workspace.holdsLinks()).toBe(false);
    expect(workspace.holdsLinks()).toBe(false);
    expect(statements).toEqual([expect.stringMatching(/^SELECT 1 .* LIMIT 1$/)]);
    await workspace.commit([{ op: 'symlink', path: 'l', target: 'd/a.txt' }]);
    expect(workspaces.open('ws').holdsLinks()).toBe(true);
    await workspace.commit([{ op: 'delete', path: 'l' }]);
    expect(workspace.holdsLinks()).toBe(false);
  });
});

describe('derived views (what a search walk remembers)', () => {
  const counted = () => {
    let runs = 0;
    return {
      compute: async () => ++runs,
      get runs() {
        return runs;
      },
    };
  };

  it('are computed once per state, and again after a commit to the workspace or to a read-only root it shows', async () => {
    const db = SqliteDatabase.memory();
    const workspaces = new Workspaces(db, new MemoryObjectStore(), {
      readOnlyRoots: [{ workspace: 'shared', path: 'vendor' }],
    });
    workspaces.create('shared');
    workspaces.create('ws');
    const view = counted();
    const derive = () => workspaces.open('ws').derived('count', view.compute, () => 1);
    expect(await derive()).toBe(1);
    expect(await derive()).toBe(1);
    await workspaces.open('ws').commit([{ op: 'write', path: 'f', content: bytes('x') }]);
    expect(await derive()).toBe(2);
    await workspaces.open('shared').commit([{ op: 'write', path: 'g', content: bytes('y') }]);
    expect(await derive()).toBe(3);
    // Another name is another view; another workspace's commit changes nothing here.
    expect(await workspaces.open('ws').derived('other', view.compute, () => 1)).toBe(4);
    workspaces.create('unrelated');
    await workspaces.open('unrelated').commit([{ op: 'write', path: 'h', content: bytes('z') }]);
    expect(await derive()).toBe(3);
  });

  it('leave a value computed across a commit under the state it started from', async () => {
    const { workspace, workspaces } = setup();
    let release!: () => void;
    const started = workspace.derived(
      'slow',
      () => new Promise<string>((resolve) => (release = () => resolve('before'))),
      () => 1,
    );
    await workspace.commit([{ op: 'write', path: 'f', content: bytes('x') }]);
    release();
    expect(await started).toBe('before');
    expect(
      await workspaces.open('ws').derived(
        'slow',
        async () => 'after',
        () => 1,
      ),
    ).toBe('after');
  });

  it('hold a bounded number of entries, dropping the oldest first', async () => {
    const { workspace } = setup();
    const view = counted();
    // Each stands for a third of the bound, less one entry: three fit, a fourth drops the first.
    const third = Math.floor(DEFAULT_VIEW_ENTRIES / 3) - 1;
    for (const name of ['a', 'b', 'c', 'd']) await workspace.derived(name, view.compute, () => third);
    expect(view.runs).toBe(4);
    await workspace.derived('d', view.compute, () => third);
    await workspace.derived('b', view.compute, () => third);
    expect(view.runs).toBe(4);
    await workspace.derived('a', view.compute, () => third);
    expect(view.runs).toBe(5);
    // One larger than the whole bound is never kept.
    await workspace.derived('huge', view.compute, () => DEFAULT_VIEW_ENTRIES);
    await workspace.derived('huge', view.compute, () => DEFAULT_VIEW_ENTRIES);
    expect(view.runs).toBe(7);
  });
});

describe('forks', () => {
  const keysUnder = async (objects: MemoryObjectStore, prefix: string) => (await objects.list(prefix)).objects.length;

  it('share the store, which goes only with the last workspace of the family', async () => {
    const { objects, workspaces, workspace } = setup();
    await workspace.commit([{ op: 'write', path: 'f', content: bytes('shared') }]);
    workspaces.fork('ws', 'copy');
    workspaces.fork('copy', 'copy2');
    expect(workspaces.open('copy2').store).toBe(workspace.store);
    expect(workspaces.open('copy2').uid).not.toBe(workspace.uid);
    const prefix = `ws/${workspace.store}/`;
    expect(await workspaces.delete('ws')).toBe(true);
    expect(await workspaces.delete('copy')).toBe(true);
    expect(await keysUnder(objects, prefix)).toBe(1);
    const copy2 = workspaces.open('copy2');
    expect(new TextDecoder().decode(await copy2.readBytes('f', copy2.entry('f')!))).toBe('shared');
    expect(await workspaces.delete('copy2')).toBe(true);
    expect(await keysUnder(objects, prefix)).toBe(0);
  });

  it('sent to another database are seen only once adopted, and a fork half sent is cleared by the next', async () => {
    const { workspaces: source, workspace, objects } = setup();
    await workspace.commit([{ op: 'write', path: 'd/f', content: bytes('x') }]);
    const snapshot = source.forkTransfer.forkSnapshot('ws');
    expect(snapshot.entries.map((entry) => entry.path)).toEqual(['d', 'd/f']);
    const db = SqliteDatabase.memory();
    const target = new Workspaces(db, new MemoryObjectStore());
    const rowsUnder = (uid: string) => db.query('SELECT path FROM entries WHERE workspace = ?', uid).length;
    const store = workspace.store;
    await target.forkTransfer.beginReceivingFork('copy', 'u-1', store);
    target.forkTransfer.receiveForkEntries('u-1', snapshot.entries.slice(0, 1));
    expect(target.info('copy')).toBeUndefined();
    // The sender died; another fork to the same name starts over.
    await target.forkTransfer.beginReceivingFork('copy', 'u-2', store);
    expect(rowsUnder('u-1')).toBe(0);
    await expectToolError(
      Promise.resolve().then(() => target.forkTransfer.receiveForkEntries('u-1', snapshot.entries)),
      'conflict',
    );
    target.forkTransfer.receiveForkEntries('u-2', snapshot.entries);
    await expectToolError(
      Promise.resolve().then(() => target.forkTransfer.adoptFork('copy', 'u-1', snapshot.workspace)),
      'conflict',
    );
    expect(target.forkTransfer.adoptFork('copy', 'u-2', snapshot.workspace)).toMatchObject({
      id: 'copy',
      files: 1,
      bytes: 1,
    });
    expect(target.open('copy').store).toBe(workspace.store);
    expect(
      target
        .open('copy')
        .entriesIn('d')
        .map((entry) => entry.path),
    ).toEqual(['d/f']);
    // With no family to ask, neither side deletes a store a fork in the other database reads.
    expect(await target.delete('copy')).toBe(true);
    expect(await source.delete('ws')).toBe(true);
    expect((await objects.list(`ws/${workspace.store}/`)).objects).toHaveLength(1);
  });

  it('across databases, leave a shared store to its family: a dropped fork and each deleted reader leave, the last deletes it', async () => {
    const objects = new MemoryObjectStore();
    const calls: string[] = [];
    // The family's semantics (its Cloudflare object has its own test in workerd): readers, and the last to leave deletes.
    const readers = new Set<string>();
    const families: StoreFamilies = {
      join: async (store, joining) => {
        calls.push(`join ${joining.map((reader) => `${reader.uid}@${reader.workspace}`).join(' ')}`);
        for (const { uid } of joining) readers.add(uid);
      },
      leave: async (store, uid) => {
        calls.push(`leave ${uid}`);
        readers.delete(uid);
        if (readers.size === 0) await deletePrefix(objects, `ws/${store}/`);
      },
      // Sweeps across the family are the Cloudflare object's (tested in workerd).
      changed: async () => {},
      rescue: async () => {},
    };
    const source = new Workspaces(SqliteDatabase.memory(), objects, { families });
    source.create('ws');
    await source.open('ws').commit([{ op: 'write', path: 'f', content: bytes('shared') }]);
    const target = new Workspaces(SqliteDatabase.memory(), objects, { families });
    // What the Cloudflare fork does: join, read, begin, send, finish; the first attempt dies half sent.
    const { uid: sourceUid, store } = source.forkTransfer.forkSource('ws');
    await source.forkTransfer.joinStoreFamily(store, [
      { uid: sourceUid, workspace: 'ws' },
      { uid: 'u-1', workspace: 'copy' },
    ]);
    const snapshot = source.forkTransfer.forkSnapshot('ws');
    await target.forkTransfer.beginReceivingFork('copy', 'u-1', store);
    await source.forkTransfer.joinStoreFamily(store, [
      { uid: sourceUid, workspace: 'ws' },
      { uid: 'u-2', workspace: 'copy' },
    ]);
    await target.forkTransfer.beginReceivingFork('copy', 'u-2', store);
    target.forkTransfer.receiveForkEntries('u-2', snapshot.entries);
    target.forkTransfer.adoptFork('copy', 'u-2', snapshot.workspace);
    expect(calls).toEqual([`join ${sourceUid}@ws u-1@copy`, `join ${sourceUid}@ws u-2@copy`, 'leave u-1']);
    expect(await source.delete('ws')).toBe(true);
    expect(calls.at(-1)).toBe(`leave ${snapshot.uid}`);
    expect(new TextDecoder().decode(await target.open('copy').readBytes('f', target.open('copy').entry('f')!))).toBe(
      'shared',
    );
    expect(await target.delete('copy')).toBe(true);
    expect(calls.at(-1)).toBe('leave u-2');
    expect((await objects.list(`ws/${store}/`)).objects).toHaveLength(0);
  });

  it('read databases made before forks: a workspace without a store column keeps its uid as its store', async () => {
    const db = SqliteDatabase.memory();
    db.script(`CREATE TABLE workspaces (id TEXT PRIMARY KEY, uid TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL,
      settings TEXT NOT NULL DEFAULT '{}', version INTEGER NOT NULL DEFAULT 0, files INTEGER NOT NULL DEFAULT 0,
      bytes INTEGER NOT NULL DEFAULT 0)`);
    db.query(`INSERT INTO workspaces (id, uid, created_at) VALUES ('old', 'u-old', '2026-01-01T00:00:00.000Z')`);
    const workspaces = new Workspaces(db, new MemoryObjectStore());
    expect(workspaces.open('old').store).toBe('u-old');
    workspaces.fork('old', 'new');
    expect(workspaces.open('new').store).toBe('u-old');
  });
});

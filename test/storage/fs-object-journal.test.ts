// The fs object store's journal: a large set is answered once its one journal file is durable, is
// served from it until moved to its files, and survives a SIGKILL before the move; a write or
// delete of a journalled key after the answer is never undone by replaying the journal.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsObjectStore } from '../../src/storage/node/fs-object-store.ts';
import { PreconditionFailedError } from '../../src/storage/object-store.ts';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array | undefined): string | undefined =>
  bytes === undefined ? undefined : new TextDecoder().decode(bytes);
const storeModule = new URL('../../src/storage/node/fs-object-store.ts', import.meta.url).pathname;

/** A set large enough to be journalled: 300 keys under `set/`, each its own content. */
const SET = Array.from({ length: 300 }, (_, index) => ({ key: `set/${index}`, value: `content ${index}\n` }));

let parent: string | undefined;
afterEach(async () => {
  if (parent !== undefined) await rm(parent, { recursive: true, force: true });
  parent = undefined;
});

const journals = async (root: string) => (await readdir(root)).filter((name) => name.startsWith('.journal-'));

/**
 * Runs `steps` (module code with `store` and `set` in scope) in a child process over a store at
 * `root` whose journals wait an hour before they move, then SIGKILLs it once it printed `done`:
 * the moves never ran. Answers what it printed.
 */
async function crashAfter(root: string, steps: string): Promise<string> {
  const script = join(root, '..', 'steps.mts');
  await writeFile(
    script,
    [
      `import { FsObjectStore } from ${JSON.stringify(storeModule)};`,
      `const store = new FsObjectStore(${JSON.stringify(root)}, { journalMoveDelayMs: 3_600_000 });`,
      `const set = ${JSON.stringify(SET)}.map(({ key, value }) => ({ key, body: new TextEncoder().encode(value) }));`,
      steps,
      `console.log('done');`,
      // Alive until killed, as a server is.
      `setInterval(() => {}, 1000);`,
    ].join('\n'),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.endsWith('done\n')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the child exited with ${code} before it was done:\n${output}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return output;
}

describe('FsObjectStore journal', () => {
  it('serves a journalled set to every call before it is moved: reads, listings, conditional puts, deletes', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    const store = new FsObjectStore(parent, { journalMoveDelayMs: 200 });
    await store.put('set/1', text('old'));
    await store.putMany(SET.map(({ key, value }) => ({ key, body: text(value) })));
    expect(await journals(parent)).toHaveLength(1);
    expect(decode((await store.get('set/1'))?.body)).toBe('content 1\n');
    const head = await store.head('set/2');
    expect(head).toMatchObject({ key: 'set/2', size: 'content 2\n'.length });
    const first = await store.list('set/', { limit: 100 });
    const rest = await store.list('set/', { cursor: first.cursor! });
    expect([...first.objects, ...rest.objects].map((object) => object.key)).toEqual(SET.map(({ key }) => key).sort());
    // The same bytes again are answered at once; a precondition holds against the journalled object.
    await store.put('set/3', text('content 3\n'));
    await expect(store.put('set/4', text('x'), { ifNoneMatch: '*' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(store.put('set/4', text('x'), { ifMatch: 'other' })).rejects.toBeInstanceOf(PreconditionFailedError);
    await store.put('set/5', text('changed'), { ifMatch: (await store.head('set/5'))!.etag });
    await store.delete('set/6');
    expect(decode((await store.get('set/5'))?.body)).toBe('changed');
    expect(await store.get('set/6')).toBeUndefined();
    await store.settled();
    expect(await journals(parent)).toEqual([]);
    expect(decode((await new FsObjectStore(parent).get('set/7'))?.body)).toBe('content 7\n');
    expect((await store.list('set/')).objects).toHaveLength(SET.length - 1);
  });

  it('a set answered before a SIGKILL is whole after a restart, though it was never moved to its files', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    const root = join(parent, 'blobs');
    const printed = await crashAfter(
      root,
      `await store.putMany(set); console.log('pending', (await (await import('node:fs/promises')).readdir(${JSON.stringify(root)})).filter((n) => n.startsWith('.journal-')).length);`,
    );
    // The crash came with the journal pending: what the restart finds is the journal's alone.
    expect(printed).toBe('pending 1\ndone\n');
    const restarted = await FsObjectStore.open(root);
    expect(await journals(root)).toEqual([]);
    const read = await Promise.all(SET.map(({ key }) => restarted.get(key)));
    expect(read.map((object) => decode(object?.body))).toEqual(SET.map(({ value }) => value));
    expect((await restarted.list('set/')).objects).toHaveLength(SET.length);
  });

  it('a key deleted or written again after the answer stays so after a SIGKILL and a restart', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    const root = join(parent, 'blobs');
    // The delete and the overwrite wait for the journal's removal: a short delay lets them end before the kill.
    const printed = await crashAfter(
      root,
      [
        `const moving = new FsObjectStore(${JSON.stringify(root)}, { journalMoveDelayMs: 100 });`,
        `await moving.putMany(set);`,
        `console.log('pending', (await (await import('node:fs/promises')).readdir(${JSON.stringify(root)})).filter((n) => n.startsWith('.journal-')).length);`,
        `await moving.delete('set/10');`,
        `await moving.put('set/11', new TextEncoder().encode('written after'));`,
        // Another set journalled and never moved, so the restart replays one.
        `await store.putMany(set.slice(0, 200).map(({ key, body }) => ({ key: 'other/' + key, body })));`,
      ].join('\n'),
    );
    expect(printed).toBe('pending 1\ndone\n');
    const restarted = await FsObjectStore.open(root);
    expect(await restarted.get('set/10')).toBeUndefined();
    expect(decode((await restarted.get('set/11'))?.body)).toBe('written after');
    expect(decode((await restarted.get('set/12'))?.body)).toBe('content 12\n');
    expect((await restarted.list('other/set/')).objects).toHaveLength(200);
    expect(await journals(root)).toEqual([]);
  });

  it('tells a set durable through shared memory, and serves it from then on, before this thread has heard the answer', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    const store = await FsObjectStore.open(parent);
    let cell: Int32Array | undefined;
    const written = store.putMany(
      SET.map(({ key, value }) => ({ key, body: text(value) })),
      { onDurabilityCell: (given) => (cell = given) },
    );
    for (let turn = 0; turn < 10 && cell === undefined; turn += 1) await Promise.resolve();
    // Blocks this thread: the writing thread's answer cannot be heard until the reads below are done.
    expect(Atomics.wait(cell!, 0, 0, 30_000)).not.toBe('timed-out');
    expect(Atomics.load(cell!, 0)).toBe(1);
    expect(decode((await store.get('set/5'))?.body)).toBe('content 5\n');
    expect(await store.head('set/6')).toMatchObject({ size: 'content 6\n'.length });
    expect((await store.list('set/')).objects).toHaveLength(SET.length);
    await written;
    await store.settled();
    expect(decode((await store.get('set/5'))?.body)).toBe('content 5\n');
  });

  it('tells a set whose journal could not be written failed, and serves none of it', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    const root = join(parent, 'blobs');
    const store = await FsObjectStore.open(root);
    // The store's directory cannot be made: a file is in its place.
    await writeFile(root, 'in the way');
    let cell: Int32Array | undefined;
    const written = store.putMany(
      SET.map(({ key, value }) => ({ key, body: text(value) })),
      { onDurabilityCell: (given) => (cell = given) },
    );
    await expect(written).rejects.toThrow();
    expect(Atomics.load(cell!, 0)).toBe(2);
    // Not served from memory: looked for in its file, below the file in the way.
    await expect(store.get('set/5')).rejects.toThrow(/ENOTDIR/);
  });

  it('a store whose journal is damaged refuses to start, naming the file', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-journal-'));
    await writeFile(join(parent, '.journal-x'), 'not a journal');
    await expect(FsObjectStore.open(parent)).rejects.toThrow(/\.journal-x is damaged/);
  });
});

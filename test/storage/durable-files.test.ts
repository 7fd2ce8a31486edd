// The threads that write the fs object store's files: many at once, each durable and whole, a
// failure of one file never failing the others of its batch, and nothing left half written.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableFiles, type DurableFilesOptions } from '../../src/storage/node/durable-files.ts';
import { OPEN_AT_ONCE } from '../../src/storage/node/durable-files-thread.ts';
import { FsObjectStore } from '../../src/storage/node/fs-object-store.ts';

let parent: string | undefined;
const writers: DurableFiles[] = [];
afterEach(async () => {
  await Promise.all(writers.splice(0).map((writer) => writer.close()));
  if (parent !== undefined) await rm(parent, { recursive: true, force: true });
});

function writer(options: DurableFilesOptions = {}): DurableFiles {
  const made = new DurableFiles({ dir: 0o700, file: 0o600 }, { width: 2, ...options });
  writers.push(made);
  return made;
}

describe('DurableFiles', () => {
  it('writes one file under its name at once with writeNamed, leaving no temp file', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const durable = writer();
    await durable.writeNamed({
      dir: parent,
      temp: join(parent, '.named.tmp'),
      file: join(parent, 'named'),
      bytes: new TextEncoder().encode('named bytes'),
    });
    expect(await readdir(parent)).toEqual(['named']);
    expect(await readFile(join(parent, 'named'), 'utf8')).toBe('named bytes');
    // A temp name in use fails the write, rather than sharing the file.
    await writeFile(join(parent, '.busy.tmp'), 'other');
    await expect(
      durable.writeNamed({
        dir: parent,
        temp: join(parent, '.busy.tmp'),
        file: join(parent, 'x'),
        bytes: new Uint8Array(1),
      }),
    ).rejects.toMatchObject({ code: 'EEXIST' });
  });

  it('writes 200 files asked for in one turn, each whole, creating their directories, with no temp file left', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const files = Array.from({ length: 200 }, (_, index) => {
      const dir = join(parent!, `d${index % 7}`, 'deep');
      return {
        dir,
        temp: join(dir, `.tmp-${index}`),
        file: join(dir, `f${index}`),
        bytes: new TextEncoder().encode(`file ${index}\n`.repeat(index)),
      };
    });
    const durable = writer();
    await Promise.all(files.map((file) => durable.write(file)));
    for (const [index, file] of files.entries())
      expect(await readFile(file.file, 'utf8')).toBe(`file ${index}\n`.repeat(index));
    for (let dir = 0; dir < 7; dir += 1)
      expect((await readdir(join(parent, `d${dir}`, 'deep'))).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('fails only the file that cannot be written, with its error code, and keeps the rest of its batch', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    // A directory in the way of the rename, and a temp path that already exists (a link planted there is not followed).
    await writeFile(join(parent, 'outside'), 'untouched');
    await symlink(join(parent, 'outside'), join(parent, '.tmp-planted'));
    const durable = writer();
    const results = await Promise.allSettled([
      durable.write({ dir: parent, temp: join(parent, '.tmp-a'), file: join(parent, 'a'), bytes: new Uint8Array([1]) }),
      durable.write({
        dir: parent,
        temp: join(parent, '.tmp-planted'),
        file: join(parent, 'b'),
        bytes: new Uint8Array([2]),
      }),
      durable.write({ dir: parent, temp: join(parent, '.tmp-c'), file: join(parent, 'c'), bytes: new Uint8Array([3]) }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as NodeJS.ErrnoException).code).toBe('EEXIST');
    expect(await readFile(join(parent, 'outside'), 'utf8')).toBe('untouched');
    expect((await readdir(parent)).sort()).toEqual(['.tmp-planted', 'a', 'c', 'outside']);
  });

  /** `count` files in two directories below `parent`, asked for in one turn. */
  async function writeMany(durable: DurableFiles, count: number): Promise<void> {
    const files = Array.from({ length: count }, (_, index) => {
      const dir = join(parent!, `many${index % 2}`);
      return {
        dir,
        temp: join(dir, `.tmp-${index}`),
        file: join(dir, `f${index}`),
        bytes: new Uint8Array([index % 256]),
      };
    });
    await Promise.all(files.map((file) => durable.write(file)));
    for (const [index, file] of files.entries()) expect([...(await readFile(file.file))]).toEqual([index % 256]);
    for (const dir of ['many0', 'many1'])
      expect((await readdir(join(parent!, dir))).filter((name) => name.startsWith('.'))).toEqual([]);
  }

  it('syncs a batch of many files with one `sync --file-system` per batch, naming one directory per filesystem', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    // The real coreutils sync, behind a script that notes each call's arguments.
    const calls = join(parent, 'calls');
    const command = join(parent, 'noting-sync');
    await writeFile(command, `#!/bin/sh\necho "$*" >> ${calls}\nenv >> ${calls}.env\nexec sync "$@"\n`);
    await chmod(command, 0o700);
    // A secret in the server's environment, as its keys are (the threads copy the environment when they start).
    process.env.TOOLGATE_DURABLE_TEST_SECRET = 'not for the sync command';
    try {
      await writeMany(writer({ syncCommand: command, syncFileSystemsFrom: 100 }), 400);
    } finally {
      delete process.env.TOOLGATE_DURABLE_TEST_SECRET;
    }
    // 400 files over two threads: two batches of 200, each synced once; both directories are on one filesystem.
    const lines = (await readFile(calls, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(new RegExp(`^--file-system -- ${parent}/many[01]$`));
    // The command gets PATH and nothing else of the server's environment (which holds its keys).
    const names = (await readFile(`${calls}.env`, 'utf8')).split('\n').map((line) => line.split('=')[0]);
    expect(names).not.toContain('TOOLGATE_DURABLE_TEST_SECRET');
    expect(names).toContain('PATH');
  });

  it('writes a set given at once as one batch with one sync, and fails the set with the first file that fails', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const calls = join(parent, 'calls');
    const command = join(parent, 'noting-sync');
    await writeFile(command, `#!/bin/sh\necho "$*" >> ${calls}\nexec sync "$@"\n`);
    await chmod(command, 0o700);
    const durable = writer({ syncCommand: command, syncFileSystemsFrom: 100 });
    const set = (name: string) =>
      Array.from({ length: 300 }, (_, index) => {
        const dir = join(parent!, name, `d${index % 3}`);
        return {
          dir,
          temp: join(dir, `.tmp-${index}`),
          file: join(dir, `f${index}`),
          bytes: new Uint8Array([index % 256]),
        };
      });
    const files = set('first');
    await durable.writeMany(files);
    for (const [index, file] of files.entries()) expect([...(await readFile(file.file))]).toEqual([index % 256]);
    // Two threads, but the set is one batch: one sync.
    expect((await readFile(calls, 'utf8')).trim().split('\n')).toHaveLength(1);

    // A temp path taken by a link planted there: that file fails with its code, the link is not followed, the rest are written.
    const failing = set('second');
    await writeFile(join(parent, 'outside'), 'untouched');
    await mkdir(failing[5]!.dir, { recursive: true });
    await symlink(join(parent, 'outside'), failing[5]!.temp);
    await expect(durable.writeMany(failing)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(join(parent, 'outside'), 'utf8')).toBe('untouched');
    expect([...(await readFile(failing[6]!.file))]).toEqual([6]);
    await expect(readFile(failing[5]!.file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('leaves batches of a few files to fdatasync, calling no command', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const command = join(parent, 'noting-sync');
    await writeFile(command, `#!/bin/sh\necho called >> ${join(parent, 'calls')}\n`);
    await chmod(command, 0o700);
    await writeMany(writer({ syncCommand: command, syncFileSystemsFrom: 100 }), 99);
    expect(await readdir(parent)).not.toContain('calls');
  });

  // Whether each file was then synced by itself cannot be seen from here (only a power cut would show it): this holds that no write fails.
  it('fails no write when the sync command is missing or fails (each file is then synced by itself)', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    await writeMany(writer({ syncCommand: join(parent, 'no-such-command'), syncFileSystemsFrom: 10 }), 50);
    await rm(join(parent, 'many0'), { recursive: true });
    await rm(join(parent, 'many1'), { recursive: true });
    await writeMany(writer({ syncCommand: 'false', syncFileSystemsFrom: 10 }), 50);
  });

  it('starts its threads again for a write after close', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const durable = writer();
    await durable.write({
      dir: parent,
      temp: join(parent, '.t1'),
      file: join(parent, 'one'),
      bytes: new Uint8Array(1),
    });
    expect(durable.usable).toBe(true);
    await durable.close();
    // A closed pool starts afresh on the next write.
    await durable.write({
      dir: parent,
      temp: join(parent, '.t2'),
      file: join(parent, 'two'),
      bytes: new Uint8Array(1),
    });
    expect((await readdir(parent)).sort()).toEqual(['one', 'two']);
  });
});

describe('FsObjectStore with a known SHA-256', () => {
  it('keeps the hash the caller gives as the etag, which equals the one it computes itself', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const store = new FsObjectStore(parent);
    const computed = await store.put('a', new TextEncoder().encode('same bytes'));
    const given = await store.put('b', new TextEncoder().encode('same bytes'), { sha256: computed.etag });
    expect(given.etag).toBe(computed.etag);
    expect((await store.head('b'))?.etag).toBe(computed.etag);
  });
});

describe('a process that wrote through the fs object store', () => {
  it('exits by itself once its writes are done: idle writing threads hold nothing open', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const script = [
      `import { FsObjectStore } from ${JSON.stringify(new URL('../../src/storage/node/fs-object-store.ts', import.meta.url).pathname)};`,
      `const store = new FsObjectStore(${JSON.stringify(parent)});`,
      `await Promise.all(Array.from({ length: 20 }, (_, i) => store.put('k/' + i, new Uint8Array([i]))));`,
      `console.log('written');`,
    ].join('\n');
    const file = join(parent, 'writer.mts');
    await writeFile(file, script);
    // Exits with 0 after printing, rather than hanging (the test's timeout) or exiting before its writes answered.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], { cwd: process.cwd() });
    expect(stdout).toBe('written\n');
    expect((await readdir(join(parent, 'k.d'))).filter((name) => name.endsWith('.obj'))).toHaveLength(20);
  });

  it('writes a batch of more files than the process may open, a slice at a time', async () => {
    parent = await mkdtemp(join(tmpdir(), 'toolgate-durable-'));
    const files = OPEN_AT_ONCE * 5;
    const script = [
      `import { DurableFiles } from ${JSON.stringify(new URL('../../src/storage/node/durable-files.ts', import.meta.url).pathname)};`,
      `const durable = new DurableFiles({ dir: 0o700, file: 0o600 }, { width: 2 });`,
      `const dir = ${JSON.stringify(parent)} + '/many';`,
      `await durable.writeMany(Array.from({ length: ${files} }, (_, i) => ({ dir: dir + '/d' + (i % 7), temp: dir + '/d' + (i % 7) + '/.tmp-' + i, file: dir + '/d' + (i % 7) + '/f' + i, bytes: new Uint8Array([i % 256]) })));`,
      `await durable.close();`,
      `console.log('written');`,
    ].join('\n');
    const file = join(parent, 'writer.mts');
    await writeFile(file, script);
    // Hard and soft limits both: Node raises the soft one to the hard one as it starts.
    const limit = OPEN_AT_ONCE + 500;
    const { stdout } = await promisify(execFile)(
      'bash',
      ['-c', `ulimit -n ${limit} && exec "$0" --import tsx "$1"`, process.execPath, file],
      { cwd: process.cwd() },
    );
    expect(stdout).toBe('written\n');
    let written = 0;
    for (let dir = 0; dir < 7; dir += 1) {
      const names = await readdir(join(parent, 'many', `d${dir}`));
      expect(names.filter((name) => name.startsWith('.tmp-'))).toEqual([]);
      written += names.length;
    }
    expect(written).toBe(files);
  });
});

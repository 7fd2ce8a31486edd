// docs/api.md read_file and write_file over real HTTP, through the typed client: every field, code and status.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ReadFileArgs, WriteFileArgs } from '../../src/client/index.ts';
import { useServer } from '../support/server-process.ts';
import { outcome, resultOf } from '../support/tool-outcome.ts';

const server = useServer({ env: { TOOLGATE_MAX_FILE_BYTES: String(1024 * 1024) } });

beforeAll(async () => {
  await server.client.putWorkspace('files');
});

// The result of a call answered 200; any other answer throws, and `outcome` gives its [status, code].
const write = async (args: WriteFileArgs) => resultOf(await server.client.writeFile('files', args));
const read = async (args: ReadFileArgs) => resultOf(await server.client.readFile('files', args));

describe('write_file', () => {
  it('creates a file and reports every result field', async () => {
    const result = await write({ path: 'notes/hello.txt', content: 'héllo\n', mode: 'create' });
    expect(Object.keys(result).sort()).toEqual([
      'appended',
      'bytesWritten',
      'created',
      'mode',
      'resolvedPath',
      'version',
    ]);
    expect(result).toMatchObject({
      resolvedPath: 'notes/hello.txt',
      mode: 'create',
      created: true,
      appended: false,
      bytesWritten: 7,
    });
    expect(typeof result.version).toBe('string');
  });

  it('overwrites by default; create on an existing path is already_exists and changes nothing', async () => {
    const first = await write({ path: 'over.txt', content: 'one' });
    const second = await write({ path: 'over.txt', content: 'two' });
    expect(second).toMatchObject({ mode: 'overwrite', created: false, appended: false, bytesWritten: 3 });
    expect(second.version).not.toBe(first.version);
    expect(await outcome(write({ path: 'over.txt', content: 'three', mode: 'create' }))).toEqual([
      409,
      'already_exists',
    ]);
    expect((await read({ path: 'over.txt' })).content).toBe('two');
  });

  it('appends, creating a missing file', async () => {
    const created = await write({ path: 'log.txt', content: 'a\n', mode: 'append' });
    expect(created).toMatchObject({ created: true, appended: true, bytesWritten: 2 });
    const appended = await write({ path: 'log.txt', content: 'b\n', mode: 'append' });
    expect(appended).toMatchObject({ created: false, appended: true, bytesWritten: 2 });
    expect(await read({ path: 'log.txt' })).toMatchObject({ content: 'a\nb\n', totalLines: 2 });
  });

  it('honours expectedVersion: current writes, stale is conflict and writes nothing', async () => {
    const v1 = (await write({ path: 'cas.txt', content: 'v1' })).version;
    const v2 = (await write({ path: 'cas.txt', content: 'v2', expectedVersion: v1 })).version;
    const stale = await outcome(write({ path: 'cas.txt', content: 'lost', expectedVersion: v1 }));
    expect(stale).toEqual([409, 'conflict']);
    expect(
      await outcome(write({ path: 'cas.txt', content: 'lost', mode: 'append', expectedVersion: 'garbage' })),
    ).toEqual([409, 'conflict']);
    expect(await outcome(write({ path: 'missing-cas.txt', content: 'x', expectedVersion: v2 }))).toEqual([
      409,
      'conflict',
    ]);
    const now = await read({ path: 'cas.txt' });
    expect(now).toMatchObject({ content: 'v2', version: v2 });
  });

  it('implies parent directories and refuses a file used as a directory', async () => {
    await write({ path: 'a/b/c/deep.txt', content: 'x' });
    const listing = await server.client.listFiles('files', { prefix: 'a', recursive: true });
    expect(listing.entries.map((entry) => [entry.path, entry.type])).toEqual([
      ['a/b', 'dir'],
      ['a/b/c', 'dir'],
      ['a/b/c/deep.txt', 'file'],
    ]);
    expect(await outcome(write({ path: 'a/b/c/deep.txt/under', content: 'x' }))).toEqual([400, 'invalid_argument']);
    expect(await outcome(write({ path: 'a/b', content: 'x' }))).toEqual([400, 'is_directory']);
  });

  it('spells paths canonically: a leading / is the workspace root, . segments are dropped', async () => {
    expect((await write({ path: '/rooted.txt', content: 'r' })).resolvedPath).toBe('rooted.txt');
    expect((await write({ path: './x/./y.txt', content: 'r' })).resolvedPath).toBe('x/y.txt');
  });

  it('refuses bad paths with the guard codes', async () => {
    const cases: Array<[string, number, string]> = [
      ['../escape.txt', 403, 'path_outside_workspace'],
      ['a/../../escape.txt', 403, 'path_outside_workspace'],
      ['a\\b.txt', 400, 'invalid_argument'],
      ['a//b.txt', 400, 'invalid_argument'],
      ['nul\u0000.txt', 400, 'invalid_argument'],
      ['ctl\u0007.txt', 400, 'invalid_argument'],
      ['cafe\u0301.txt', 400, 'invalid_argument'],
      ['dir/', 400, 'invalid_argument'],
      [`${'x'.repeat(4097)}`, 400, 'invalid_argument'],
      ['.ssh/authorized_keys', 403, 'path_denied'],
      ['home/.SSH/id_rsa', 403, 'path_denied'],
      ['.aws/credentials', 403, 'path_denied'],
      ['.git/hooks/pre-commit', 403, 'path_denied'],
      ['sub/.Git/Hooks/post-checkout', 403, 'path_denied'],
    ];
    for (const [path, status, expected] of cases) {
      expect({ path, answer: await outcome(write({ path, content: 'x' })) }).toEqual({
        path,
        answer: [status, expected],
      });
    }
    for (const path of ['.gitignore', '.git/config', '.github/workflows/ci.yml', '.git/hooksx']) {
      expect({ path, status: (await outcome(write({ path, content: 'x' })))[0] }).toEqual({ path, status: 200 });
    }
  });

  it('refuses a hooks directory anywhere below .git, by write_file and by apply_patch, writing nothing', async () => {
    const refused = ['.git/modules/x/hooks/post-checkout', 'a/.git/modules/b/hooks', '.GIT/Modules/x/HOOKS/y'];
    const patch = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+#!/bin/sh\n*** End Patch\n`;
    for (const path of refused) {
      expect({ path, write: await outcome(write({ path, content: '#!/bin/sh\n' })) }).toEqual({
        path,
        write: [403, 'path_denied'],
      });
      expect({ path, patch: await outcome(server.client.applyPatch('files', { patch: patch(path) })) }).toEqual({
        path,
        patch: [403, 'path_denied'],
      });
      expect({ path, read: await outcome(read({ path })) }).toEqual({ path, read: [404, 'not_found'] });
    }
    // A hooks directory elsewhere, and a name that merely starts with hooks, stay writable.
    for (const path of ['src/hooks/a.ts', '.github/hooks/x', '.git/modules/x/hooksx']) {
      expect({ path, write: (await outcome(write({ path, content: 'x' })))[0] }).toEqual({ path, write: 200 });
    }
    expect((await outcome(server.client.applyPatch('files', { patch: patch('lib/hooks/post.sh') })))[0]).toBe(200);
  });

  it('refuses a file over the configured size, also when an append would make it one', async () => {
    expect(await outcome(write({ path: 'huge.txt', content: 'x'.repeat(1024 * 1024 + 1) }))).toEqual([
      413,
      'payload_too_large',
    ]);
    await write({ path: 'grow.txt', content: 'x'.repeat(1024 * 1024 - 1) });
    expect(await outcome(write({ path: 'grow.txt', content: 'yy', mode: 'append' }))).toEqual([
      413,
      'payload_too_large',
    ]);
    expect((await read({ path: 'grow.txt', maxChars: 1 })).totalLines).toBe(1);
  });

  it('refuses text with unpaired surrogates instead of altering it', async () => {
    expect(await outcome(write({ path: 'lone.txt', content: 'a\ud800b' }))).toEqual([400, 'invalid_argument']);
    expect(await outcome(read({ path: 'lone.txt' }))).toEqual([404, 'not_found']);
  });
});

describe('read_file', () => {
  beforeAll(async () => {
    await write({ path: 'lines.txt', content: 'one\ntwo\nthree\nfour\n' });
    await write({ path: 'crlf.txt', content: 'a\r\nb\r\nc' });
    await write({ path: 'empty.txt', content: '' });
  });

  it('reads a whole file with every result field', async () => {
    expect(await read({ path: 'lines.txt' })).toEqual({
      path: 'lines.txt',
      content: 'one\ntwo\nthree\nfour\n',
      startLine: 1,
      endLine: 4,
      totalLines: 4,
      truncated: false,
      version: expect.any(String),
    });
  });

  it('reads inclusive 1-based ranges and clamps endLine past the end', async () => {
    expect(await read({ path: 'lines.txt', startLine: 2, endLine: 3 })).toMatchObject({
      content: 'two\nthree\n',
      startLine: 2,
      endLine: 3,
    });
    expect(await read({ path: 'lines.txt', startLine: 4, endLine: 99 })).toMatchObject({
      content: 'four\n',
      endLine: 4,
      totalLines: 4,
    });
    expect(await read({ path: 'lines.txt', endLine: 1 })).toMatchObject({ content: 'one\n', startLine: 1, endLine: 1 });
  });

  it('refuses a startLine past the end and an endLine before startLine', async () => {
    expect(await outcome(read({ path: 'lines.txt', startLine: 5 }))).toEqual([400, 'invalid_argument']);
    expect(await outcome(read({ path: 'lines.txt', startLine: 3, endLine: 2 }))).toEqual([400, 'invalid_argument']);
    expect(await outcome(read({ path: 'lines.txt', startLine: 0 }))).toEqual([400, 'invalid_argument']);
  });

  it('keeps CRLF byte for byte and counts a final line without \\n', async () => {
    const result = await read({ path: 'crlf.txt' });
    expect(result).toMatchObject({ content: 'a\r\nb\r\nc', totalLines: 3, endLine: 3 });
    expect((await read({ path: 'crlf.txt', startLine: 2, endLine: 2 })).content).toBe('b\r\n');
  });

  it('reads an empty file as 0 lines, and startLine 1 is allowed', async () => {
    const result = await read({ path: 'empty.txt', startLine: 1 });
    expect(result).toMatchObject({ content: '', totalLines: 0, truncated: false });
    expect(await outcome(read({ path: 'empty.txt', startLine: 2 }))).toEqual([400, 'invalid_argument']);
  });

  it('cuts at maxChars with truncated, never splitting a surrogate pair', async () => {
    const cut = await read({ path: 'lines.txt', maxChars: 6 });
    expect(cut).toMatchObject({ content: 'one\ntw', truncated: true, startLine: 1, endLine: 2, totalLines: 4 });
    await write({ path: 'emoji.txt', content: 'a😀b' });
    expect(await read({ path: 'emoji.txt', maxChars: 2 })).toMatchObject({ content: 'a', truncated: true });
    expect(await read({ path: 'emoji.txt', maxChars: 3 })).toMatchObject({ content: 'a😀', truncated: true });
    expect(await read({ path: 'emoji.txt', maxChars: 4 })).toMatchObject({ content: 'a😀b', truncated: false });
  });

  it('cuts at 20,000 characters by default', async () => {
    await write({ path: 'long.txt', content: 'x'.repeat(25_000) });
    const result = await read({ path: 'long.txt' });
    expect(result.content).toHaveLength(20_000);
    expect(result.truncated).toBe(true);
  });

  it('changes version whenever the file changes', async () => {
    const before = (await read({ path: 'lines.txt' })).version;
    expect((await read({ path: 'lines.txt' })).version).toBe(before);
    await write({ path: 'lines.txt', content: 'changed\n', mode: 'append' });
    expect((await read({ path: 'lines.txt' })).version).not.toBe(before);
  });

  it('answers not_found, is_directory and path codes', async () => {
    expect(await outcome(read({ path: 'nope.txt' }))).toEqual([404, 'not_found']);
    expect(await outcome(read({ path: 'a/b' }))).toEqual([400, 'is_directory']);
    expect(await outcome(read({ path: '' }))).toEqual([400, 'is_directory']);
    expect(await outcome(read({ path: '../etc/passwd' }))).toEqual([403, 'path_outside_workspace']);
    expect(await outcome(read({ path: '/etc/passwd' }))).toEqual([404, 'not_found']);
    expect(await outcome(server.client.readFile('absent', { path: 'x' }))).toEqual([404, 'not_found']);
  });
});

// read_file and write_file through symlinks, read-only roots and non-UTF-8 content, via the HTTP app.
import { beforeAll, describe, expect, it } from 'vitest';
import { inProcessApp } from '../support/in-process.ts';

let api: Awaited<ReturnType<typeof inProcessApp>>;
const bytes = (text: string) => new TextEncoder().encode(text);
const code = (answer: { status: number; body: any }) => [answer.status, answer.body?.error?.code];
const read = (args: Record<string, unknown>, ws = 'links') =>
  api.call('POST', `/v1/workspaces/${ws}/tools/read_file`, args);
const write = (args: Record<string, unknown>, ws = 'links') =>
  api.call('POST', `/v1/workspaces/${ws}/tools/write_file`, args);

beforeAll(async () => {
  api = await inProcessApp([{ path: '.skills', workspace: 'skills' }]);
  api.workspaces.create('links');
  api.workspaces.create('skills');
  await api.workspaces.open('skills').commit([{ op: 'write', path: 'review/SKILL.md', content: bytes('# Review\n') }]);
  const chain = Array.from({ length: 9 }, (_, i) => ({
    op: 'symlink' as const,
    path: `chain${i}`,
    target: `chain${i + 1}`,
  }));
  await api.workspaces
    .open('links')
    .commit([
      { op: 'write', path: 'real/file.txt', content: bytes('real content\n') },
      { op: 'write', path: 'binary.bin', content: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]) },
      { op: 'write', path: 'bom.txt', content: new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]) },
      { op: 'symlink', path: 'link.txt', target: 'real/file.txt' },
      { op: 'symlink', path: 'dirlink', target: '/real' },
      { op: 'symlink', path: 'a/b/up', target: '../..' },
      { op: 'symlink', path: 'escape', target: '../../etc' },
      { op: 'symlink', path: 'nested/deeper/out', target: '../../../outside' },
      { op: 'symlink', path: 'loop1', target: 'loop2' },
      { op: 'symlink', path: 'loop2', target: 'loop1' },
      { op: 'symlink', path: 'keys', target: '.ssh' },
      ...chain,
      { op: 'write', path: 'chain9', content: bytes('end of chain\n') },
    ]);
});

describe('symlinks', () => {
  it('reads through file and directory links, reporting the path as asked', async () => {
    expect((await read({ path: 'link.txt' })).body.result).toMatchObject({
      path: 'link.txt',
      content: 'real content\n',
    });
    expect((await read({ path: 'dirlink/file.txt' })).body.result.content).toBe('real content\n');
    expect((await read({ path: 'a/b/up/real/file.txt' })).body.result.content).toBe('real content\n');
  });

  it('writes through a link to its target and names the target', async () => {
    const answer = await write({ path: 'dirlink/new.txt', content: 'via link' });
    expect(answer.body.result.resolvedPath).toBe('real/new.txt');
    expect((await read({ path: 'real/new.txt' })).body.result.content).toBe('via link');
  });

  it('follows exactly 8 hops and refuses the 9th, and refuses cycles', async () => {
    expect((await read({ path: 'chain1' })).body.result.content).toBe('end of chain\n');
    expect(code(await read({ path: 'chain0' }))).toEqual([400, 'symlink_loop']);
    expect(code(await read({ path: 'loop1' }))).toEqual([400, 'symlink_loop']);
    expect(code(await write({ path: 'loop2/x', content: 'x' }))).toEqual([400, 'symlink_loop']);
  });

  it('refuses links that leave the workspace, at any level above the target', async () => {
    expect(code(await read({ path: 'escape/passwd' }))).toEqual([403, 'path_outside_workspace']);
    expect(code(await read({ path: 'nested/deeper/out/x/y/z' }))).toEqual([403, 'path_outside_workspace']);
    expect(code(await write({ path: 'escape/evil', content: 'x' }))).toEqual([403, 'path_outside_workspace']);
  });

  it('refuses a write that reaches a denylisted directory through a link', async () => {
    expect(code(await write({ path: 'keys/authorized_keys', content: 'x' }))).toEqual([403, 'path_denied']);
  });

  it('lists symlinks with their targets', async () => {
    const listing = await api.call('GET', '/v1/workspaces/links/files');
    expect(listing.body.entries.find((entry: any) => entry.path === 'link.txt')).toMatchObject({
      type: 'symlink',
      target: 'real/file.txt',
    });
    const viaLink = await api.call('GET', '/v1/workspaces/links/files?prefix=dirlink');
    expect(viaLink.body.entries.map((entry: any) => entry.path)).toContain('real/file.txt');
  });
});

describe('content that is not text', () => {
  it('answers binary_file (415) for bytes that are not UTF-8', async () => {
    expect(code(await read({ path: 'binary.bin' }))).toEqual([415, 'binary_file']);
  });

  it('keeps a byte order mark', async () => {
    expect((await read({ path: 'bom.txt' })).body.result.content).toBe('\ufeffhi');
  });
});

describe('read-only roots', () => {
  it('are readable at their mount path and never writable', async () => {
    expect((await read({ path: '.skills/review/SKILL.md' })).body.result.content).toBe('# Review\n');
    expect(code(await write({ path: '.skills/review/SKILL.md', content: 'x' }))).toEqual([403, 'path_denied']);
    expect(code(await write({ path: '.skills/new.md', content: 'x' }))).toEqual([403, 'path_denied']);
    const listing = await api.call('GET', '/v1/workspaces/links/files?prefix=.skills&recursive=true');
    expect(listing.body.entries.map((entry: any) => entry.path)).toEqual(['.skills/review', '.skills/review/SKILL.md']);
    expect((await read({ path: 'review/SKILL.md' }, 'skills')).body.result.content).toBe('# Review\n');
  });
});

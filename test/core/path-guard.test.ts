// The path guard's resolution: walking the manifest, following symlinks, hop limits, cycles and escapes.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import {
  resolvePath,
  type GuardEntry,
  type GuardOptions,
  type GuardPolicy,
  type ResolvedPath,
} from '../../src/core/path-guard.ts';
import { dir, file, link, manifestView } from './in-memory-manifest-view.ts';

const read: GuardOptions = { access: 'read' };

/** The guard's answer, a refusal as a rejection (the guard itself throws: it runs synchronously). */
async function resolve(
  entries: Record<string, GuardEntry>,
  input: unknown,
  options: Partial<GuardOptions> = {},
  policy: GuardPolicy = {},
): Promise<ResolvedPath> {
  return resolvePath(manifestView(entries), input, policy, { ...read, ...options });
}

async function refusal(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

/** `l1 -> l2 -> ... -> l{n} -> end`: resolving `l1` takes exactly n hops. */
function chain(n: number): Record<string, GuardEntry> {
  const entries: Record<string, GuardEntry> = { end: file };
  for (let i = 1; i <= n; i++) entries[`l${i}`] = link(i === n ? 'end' : `l${i + 1}`);
  return entries;
}

describe('resolvePath without links', () => {
  it('walks a plain path and reports its entry, or none when absent', async () => {
    const entries = { 'src/index.ts': file };
    expect(await resolve(entries, 'src/index.ts')).toEqual({
      input: 'src/index.ts',
      path: 'src/index.ts',
      segments: ['src', 'index.ts'],
      entry: file,
      hops: 0,
    });
    expect(await resolve(entries, '/src/./new/deep.ts')).toMatchObject({
      path: 'src/new/deep.ts',
      entry: undefined,
      hops: 0,
    });
  });

  it('keeps the rest of a path below a file as written, with no entry', async () => {
    expect(await resolve({ 'a.txt': file }, 'a.txt/x/y')).toMatchObject({ path: 'a.txt/x/y', entry: undefined });
  });

  it('answers the root for every spelling of it, as a directory', async () => {
    for (const input of ['', '/', '.', './'])
      expect(await resolve({}, input)).toMatchObject({ path: '', segments: [], entry: dir });
  });

  it('passes refusals of the path itself through with the input as given', async () => {
    expect((await refusal(resolve({}, 42))).details).toEqual({ path: 42 });
    expect((await refusal(resolve({}, 'a/../b'))).code).toBe('path_outside_workspace');
    expect((await refusal(resolve({}, 'a\\b'))).code).toBe('invalid_argument');
    expect((await refusal(resolve({}, 'dir/'))).code).toBe('invalid_argument');
    expect(await resolve({}, 'dir/', { directory: true })).toMatchObject({ path: 'dir' });
  });

  it('looks up each prefix once, whatever the size of the workspace', async () => {
    const entries: Record<string, GuardEntry> = {};
    for (let i = 0; i < 5000; i++) entries[`bulk/f${i}`] = file;
    const view = manifestView({ ...entries, 'a/b/c/d.ts': file });
    await resolvePath(view, 'a/b/c/d.ts', {}, read);
    expect(view.lookups).toEqual(['a', 'a/b', 'a/b/c', 'a/b/c/d.ts']);
  });
});

describe('resolvePath through symlinks', () => {
  it("follows a relative target from the link's directory and reports the entry reached", async () => {
    const entries = { 'src/current': link('v2'), 'src/v2/main.ts': file };
    expect(await resolve(entries, 'src/current/main.ts')).toMatchObject({
      path: 'src/v2/main.ts',
      segments: ['src', 'v2', 'main.ts'],
      entry: file,
      hops: 1,
    });
    expect(await resolve(entries, 'src/current')).toMatchObject({ path: 'src/v2', entry: dir, hops: 1 });
  });

  it('follows a workspace-absolute target from the root, never the host', async () => {
    const entries = {
      'deep/down/abs': link('/etc/passwd'),
      'deep/down/top': link('/'),
      'deep/down/twice': link('//etc//x/'),
    };
    expect(await resolve(entries, 'deep/down/abs')).toMatchObject({ path: 'etc/passwd', hops: 1 });
    expect(await resolve(entries, 'deep/down/top/a')).toMatchObject({ path: 'a' });
    expect(await resolve(entries, 'deep/down/twice/y')).toMatchObject({ path: 'etc/x/y' });
  });

  it('ignores . and empty segments in targets, as POSIX does', async () => {
    expect(await resolve({ l: link('./d//e/.'), 'd/e': dir }, 'l/f')).toMatchObject({ path: 'd/e/f' });
  });

  it('follows a link to a parent inside the workspace as often as the path asks', async () => {
    expect(await resolve({ 'a/b/up': link('..') }, 'a/b/up/b/up/x')).toMatchObject({ path: 'a/x', hops: 2 });
  });

  it('follows chains of exactly 8 hops and refuses a 9th as symlink_loop', async () => {
    expect(await resolve(chain(8), 'l1')).toMatchObject({ path: 'end', entry: file, hops: 8 });
    const error = await refusal(resolve(chain(9), 'l1'));
    expect(error.code).toBe('symlink_loop');
    expect(error.message).toMatch(/more than 8 symlink hops/);
    expect(error.details).toMatchObject({ path: 'l1', link: 'l9', target: 'end' });
  });

  it('counts hops through directories as well as on the final segment', async () => {
    const entries: Record<string, GuardEntry> = { 'd8/x': file };
    for (let i = 0; i < 8; i++) entries[`d${i}`] = link(`d${i + 1}`);
    expect(await resolve(entries, 'd1/x')).toMatchObject({ path: 'd8/x', hops: 7 });
    expect((await refusal(resolve({ ...entries, dm: link('d0') }, 'dm/x'))).code).toBe('symlink_loop');
  });

  it('honours a smaller maxSymlinkHops from the policy', async () => {
    expect((await refusal(resolve(chain(3), 'l1', {}, { maxSymlinkHops: 2 }))).code).toBe('symlink_loop');
  });

  it('refuses a self-loop, a 2-cycle and a cycle through a directory as symlink_loop', async () => {
    for (const [entries, input] of [
      [{ a: link('a') }, 'a'],
      [{ a: link('b'), b: link('a') }, 'a/x'],
      [{ a: link('b/x'), b: link('a') }, 'a'],
      [{ 'p/l': link('../q/m'), 'q/m': link('../p/l/deeper') }, 'p/l'],
    ] as const) {
      const error = await refusal(resolve(entries, input));
      expect(error.code).toBe('symlink_loop');
      expect(error.message).toMatch(/cycle/);
    }
  });

  it('refuses relative targets whose .. climbs above the root, naming the link and its target', async () => {
    const error = await refusal(resolve({ 'a/escape': link('../../etc') }, 'a/escape/passwd'));
    expect(error.code).toBe('path_outside_workspace');
    expect(error.details).toEqual({ path: 'a/escape/passwd', link: 'a/escape', target: '../../etc' });
    expect(error.message).toContain('"a/escape" -> "../../etc"');
  });

  it('refuses a symlinked ancestor that leaves, however deep the path below it goes (the AI4J hole)', async () => {
    const entries = { link: link('../outside'), 'linkdir/escape': link('../../outside') };
    for (const input of [
      'link',
      'link/x',
      'link/x/y/z',
      'linkdir/escape/sub/secret2.txt',
      'linkdir/escape/sub/deeper/new.txt',
    ]) {
      expect((await refusal(resolve(entries, input))).code).toBe('path_outside_workspace');
    }
  });

  it('tells a deep link that stays inside from one that climbs out', async () => {
    expect(await resolve({ 'a/b/c/deep': link('../../..') }, 'a/b/c/deep/x')).toMatchObject({ path: 'x' });
    expect((await refusal(resolve({ 'a/b/deep': link('../../..') }, 'a/b/deep/x'))).code).toBe(
      'path_outside_workspace',
    );
  });

  it("applies a target's .. to the resolved parent, so the answer matches the kernel's", async () => {
    // `x -> .` makes `x/..` the root's parent on disk, even though `x/..` looks like the root as text.
    expect((await refusal(resolve({ x: link('.'), l: link('x/../secret') }, 'l'))).code).toBe('path_outside_workspace');
    // Go os.Root's "dotdot after symlink": `a -> b/c`, then `a/..` is `b`.
    expect(await resolve({ a: link('b/c'), 'b/c': dir, p: link('a/../t') }, 'p')).toMatchObject({
      path: 'b/t',
      hops: 2,
    });
  });

  it('refuses targets that cannot be followed safely as path_outside_workspace', async () => {
    for (const target of ['', null, 'a\u0000b', 'a\nb', 'a\\b', 'cafe\u0301', '\u0085', 'x/'.repeat(2100)]) {
      const error = await refusal(resolve({ l: link(target) }, 'l/x'));
      expect(error.code).toBe('path_outside_workspace');
      expect(error.details).toMatchObject({ path: 'l/x', link: 'l' });
    }
  });

  it('refuses a path that grows past 4096 bytes through its links', async () => {
    const long = 'n'.repeat(250);
    const entries = { l: link(Array.from({ length: 16 }, () => long).join('/')) };
    expect(await resolve(entries, 'l/more')).toMatchObject({ hops: 1 });
    expect((await refusal(resolve(entries, `l/${'m'.repeat(100)}`))).code).toBe('invalid_argument');
  });
});

describe('resolvePath with followFinalSymlink: false', () => {
  const entries = { out: link('../outside'), 'd/in': link('../target'), target: file, hop: link('d') };

  it('stops at a final link and reports the link itself', async () => {
    expect(await resolve(entries, 'out', { followFinalSymlink: false })).toEqual({
      input: 'out',
      path: 'out',
      segments: ['out'],
      entry: link('../outside'),
      hops: 0,
    });
    expect(await resolve(entries, 'hop/in', { followFinalSymlink: false })).toMatchObject({
      path: 'd/in',
      entry: { type: 'symlink' },
      hops: 1,
    });
  });

  it('still follows links before the final segment, and a final link named with a trailing /', async () => {
    expect((await refusal(resolve(entries, 'out/x', { followFinalSymlink: false }))).code).toBe(
      'path_outside_workspace',
    );
    expect((await refusal(resolve(entries, 'out/', { followFinalSymlink: false, directory: true }))).code).toBe(
      'path_outside_workspace',
    );
  });
});

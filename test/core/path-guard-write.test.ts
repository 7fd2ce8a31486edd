// The path guard's write rules: the denylist, excludedPaths and read-only roots, on the path as given and as resolved.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import {
  assertWritable,
  isDeniedForWrite,
  isExcluded,
  resolvePath,
  type GuardEntry,
  type GuardPolicy,
  type ResolvedPath,
} from '../../src/core/path-guard.ts';
import { parseVirtualPath } from '../../src/core/virtual-path.ts';
import { file, link, manifestView } from './in-memory-manifest-view.ts';

/** The guard's answers, a refusal as a rejection (the guard itself throws: it runs synchronously). */
async function write(
  entries: Record<string, GuardEntry>,
  input: string,
  policy: GuardPolicy = {},
  followFinalSymlink = true,
): Promise<ResolvedPath> {
  return resolvePath(manifestView(entries), input, policy, { access: 'write', followFinalSymlink });
}

async function read(
  entries: Record<string, GuardEntry>,
  input: string,
  policy: GuardPolicy = {},
): Promise<ResolvedPath> {
  return resolvePath(manifestView(entries), input, policy, { access: 'read' });
}

async function denied(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect((error as ToolError).code).toBe('path_denied');
  return error as ToolError;
}

const segments = (path: string): string[] => parseVirtualPath(path).segments;

describe('the write denylist', () => {
  const refused = [
    '.ssh',
    '.ssh/authorized_keys',
    '.aws/credentials',
    '.git/hooks',
    '.git/hooks/pre-commit',
    'a/.aws/x',
    'x/.git/hooks/y',
    'deep/er/.ssh/id_rsa',
    '.SSH/k',
    '.Ssh/k',
    '.AWS/config',
    '.Git/Hooks/x',
    '.GIT/HOOKS/pre-commit',
    'a/.gIt/hOoKs',
    '.\u017fsh/k', // a long s, which folding disks treat as s
    // A submodule's hooks, and any hooks segment deeper below .git.
    '.git/modules/x/hooks/y',
    '.git/modules/x/hooks',
    'a/.git/modules/b/hooks',
    '.GIT/Modules/x/HOOKS/y',
    '.git/modules/a/modules/b/hooks/post-checkout',
  ];
  const allowed = [
    '.gitignore',
    '.git/config',
    '.git/HEAD',
    '.github/workflows/ci.yml',
    '.git/hooksx',
    '.git/hook',
    'hooks/x',
    '.git',
    'ssh',
    '.sshx/a',
    'x.ssh',
    '.awsome',
    'git/hooks/x',
    'src/hooks/a.ts',
    '.github/hooks/x',
    'hooks/.git',
    'a/hooks/b/.git/config',
    '.git/modules/x/hooksx',
    '.git/modules/x/config',
    '.gitmodules',
  ];

  it.each(refused)('refuses writing %j, and lets it be read', async (path) => {
    expect(isDeniedForWrite(segments(path))).toBe(true);
    const error = await denied(write({}, path));
    expect(error.details).toEqual({ path });
    expect(error.message).toContain(JSON.stringify(path));
    expect(await read({}, path)).toMatchObject({ path });
  });

  it.each(allowed)('allows writing %j', async (path) => {
    expect(isDeniedForWrite(segments(path))).toBe(false);
    expect(await write({}, path)).toMatchObject({ path });
  });

  it('refuses a write that reaches a denied place through a symlink, naming where it resolved', async () => {
    const entries = {
      safe: link('.ssh'),
      'a/abs': link('/.git/hooks'),
      'cfg/aws': link('../x/.AWS'),
      sub: link('.git/modules/lib'),
    };
    const error = await denied(write(entries, 'safe/k'));
    expect(error.message).toContain('"safe/k" (as ".ssh/k")');
    await denied(write(entries, 'a/abs/pre-commit'));
    await denied(write(entries, 'sub/hooks/post-checkout'));
    expect(await write(entries, 'sub/config')).toMatchObject({ path: '.git/modules/lib/config' });
    await denied(write(entries, 'cfg/aws/credentials'));
    expect(await read(entries, 'safe/k')).toMatchObject({ path: '.ssh/k', hops: 1 });
  });

  it('lets a link that points into a denied place be replaced itself when the final link is not followed', async () => {
    expect(await write({ safe: link('.ssh') }, 'safe', {}, false)).toMatchObject({
      path: 'safe',
      entry: { type: 'symlink' },
    });
    await denied(write({ safe: link('.ssh') }, 'safe'));
  });
});

describe('excludedPaths', () => {
  const policy = { excludedPaths: ['target', '/node_modules', 'build/out/'] };

  it('covers the excluded path and everything under it, compared by whole segments', async () => {
    for (const path of [
      'target',
      'target/x',
      'target/classes/Evil.class',
      'node_modules/a/b.js',
      'build/out',
      'build/out/x',
      'Target/x',
    ]) {
      expect(isExcluded(segments(path), policy.excludedPaths)).toBe(true);
      const error = await denied(write({}, path, policy));
      expect(error.message).toMatch(/excluded path/);
    }
  });

  it('does not cover names that merely start the same, or the same name deeper down', async () => {
    for (const path of ['targetx', 'target2/x', 'docs/target/notes.md', 'build/output', 'build', 'node_modules2']) {
      expect(isExcluded(segments(path), policy.excludedPaths)).toBe(false);
      expect(await write({}, path, policy)).toMatchObject({ path });
    }
  });

  it('also refuses a write that reaches an excluded path through a symlink', async () => {
    await denied(write({ out: link('target/classes') }, 'out/A.class', policy));
    expect(await read({ out: link('target/classes') }, 'out/A.class', policy)).toMatchObject({
      path: 'target/classes/A.class',
    });
  });
});

describe('read-only roots', () => {
  const policy = { readOnlyRoots: ['skills', 'shared/tools/'] };
  const entries = {
    'skills/SKILL.md': file,
    'mine/skill': link('../skills/SKILL.md'),
    'mine/all': link('/skills'),
    'shared/tools/t.sh': file,
  };

  it('are readable, and the root reached is reported in canonical form', async () => {
    expect(await read(entries, 'skills/SKILL.md', policy)).toMatchObject({
      path: 'skills/SKILL.md',
      entry: file,
      readOnlyRoot: 'skills',
    });
    expect(await read(entries, 'skills', policy)).toMatchObject({ readOnlyRoot: 'skills' });
    expect(await read(entries, 'shared/tools/t.sh', policy)).toMatchObject({ readOnlyRoot: 'shared/tools' });
    expect(await read(entries, 'mine/skill', policy)).toMatchObject({
      path: 'skills/SKILL.md',
      readOnlyRoot: 'skills',
      hops: 1,
    });
  });

  it('are not reported for siblings that share a prefix', async () => {
    const resolved = await read(entries, 'skills2/x', policy);
    expect(resolved.readOnlyRoot).toBeUndefined();
    expect('readOnlyRoot' in resolved).toBe(false);
  });

  it('report the most specific root when roots nest', async () => {
    expect(await read({}, 'skills/deep/x', { readOnlyRoots: ['skills', 'skills/deep'] })).toMatchObject({
      readOnlyRoot: 'skills/deep',
    });
  });

  it('refuse writes, directly or through a symlink, and in any letter case', async () => {
    for (const path of [
      'skills/SKILL.md',
      'skills/new.md',
      'Skills/x',
      'mine/skill',
      'mine/all/new.md',
      'shared/tools/x',
    ]) {
      const error = await denied(write(entries, path, policy));
      expect(error.message).toMatch(/read-only root/);
    }
    expect(await write(entries, 'skills2/x', policy)).toMatchObject({ path: 'skills2/x' });
  });
});

describe('assertWritable', () => {
  it('accepts what no rule covers and names the shown path when refusing', () => {
    expect(() =>
      assertWritable(['src', 'a.ts'], { excludedPaths: ['target'], readOnlyRoots: ['skills'] }, 'src/a.ts'),
    ).not.toThrow();
    expect(() => assertWritable(['.ssh', 'k'], {}, './.ssh/k')).toThrow(/"\.\/\.ssh\/k" \(as "\.ssh\/k"\)/);
  });
});

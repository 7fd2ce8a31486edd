// walkWorkspace against ripgrep itself: the same tree on disk for `rg --files` and in a workspace.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../../src/storage/node/sqlite-database.ts';
import { WorkBudget } from '../../../src/core/work-budget.ts';
import { comparePaths, walkWorkspace, type WalkOptions } from '../../../src/tools/search/search-walk.ts';
import type { Workspace } from '../../../src/workspace/workspace.ts';
import { Workspaces } from '../../../src/workspace/workspaces.ts';
import { searchOutsideTree, searchSampleTree } from '../../support/search-sample-tree.ts';
import { rgFiles, treeChanges, writeTreeToDisk } from '../../support/search-tree.ts';

let workspace: Workspace;
let disk: ReturnType<typeof writeTreeToDisk>;
const walk = async (options: Partial<WalkOptions>, clock?: WorkBudget) =>
  (await walkWorkspace(workspace, { hidden: false, noIgnore: false, globs: [], ...options }, clock)).map(
    (file) => file.path,
  );
/** rg's list without what it finds through links out of the tree, which toolgate never follows. */
const rg = (args: string[]) => rgFiles(disk, args).paths.filter((path) => !/^links\/out(\/|-file$)/.test(path));

beforeAll(async () => {
  const workspaces = new Workspaces(SqliteDatabase.memory(), new MemoryObjectStore(), {
    readOnlyRoots: [{ path: 'mounted', workspace: 'skills' }],
  });
  workspaces.create('search');
  workspaces.create('skills');
  workspace = workspaces.open('search');
  await workspace.commit(treeChanges(searchSampleTree));
  await workspaces.open('skills').commit(treeChanges({ '.gitignore': '*.tmp\n', 'a/SKILL.md': '#\n', 'a/x.tmp': 'x' }));
  disk = writeTreeToDisk(searchSampleTree, searchOutsideTree);
});
afterAll(() => rmSync(disk.base, { recursive: true, force: true }));

const cases: Array<[string, string[], Partial<WalkOptions>]> = [
  ['the defaults', [], {}],
  ['hidden', ['--hidden'], { hidden: true }],
  ['no ignore', ['--no-ignore'], { noIgnore: true }],
  ['hidden and no ignore', ['--hidden', '--no-ignore'], { hidden: true, noIgnore: true }],
  ['a subdirectory', ['src'], { path: 'src' }],
  ['a deeper subdirectory (parent rules)', ['src/lib'], { path: 'src/lib' }],
  ['a directory through a link', ['links/to-src'], { path: 'links/to-src' }],
  ['an ignored directory named outright', ['build'], { path: 'build' }],
  ['a hidden directory named outright', ['.hidden'], { path: '.hidden' }],
  ['an ignored file named outright', ['debug.log'], { path: 'debug.log' }],
  ['a nested repository', ['pkg'], { path: 'pkg' }],
  ['a glob', ['-g', '*.ts'], { globs: ['*.ts'] }],
  ['a negated glob', ['-g', '!src'], { globs: ['!src'] }],
  ['two globs', ['-g', '*.ts', '-g', '!**/lib/**'], { globs: ['*.ts', '!**/lib/**'] }],
  ['a glob with a type', ['-g', '!src/**', '-t', 'ts'], { globs: ['!src/**'], type: 'ts' }],
  ['type rust', ['-t', 'rust'], { type: 'rust' }],
  ['type ts, hidden files included by it', ['-t', 'ts'], { type: 'ts' }],
  ['type make', ['-t', 'make'], { type: 'make' }],
  ['type cmake', ['-t', 'cmake'], { type: 'cmake' }],
  ['type py', ['-t', 'py'], { type: 'py' }],
  ['type md in a subdirectory', ['-t', 'md', 'docs'], { type: 'md', path: 'docs' }],
  ['type toml, hidden', ['-t', 'toml', '--hidden'], { type: 'toml', hidden: true }],
];

describe('walkWorkspace lists what rg --files lists', () => {
  for (const [title, args, options] of cases) {
    it(title, async () => {
      expect(await walk(options)).toEqual(rg(args));
    });
  }

  it('never reports what lies behind a link out of the workspace, where rg follows it', async () => {
    expect(rgFiles(disk, []).paths).toContain('links/out/secret.txt');
    const everything = await walk({ hidden: true, noIgnore: true });
    expect(everything.filter((path) => path.startsWith('links/out'))).toEqual([]);
    expect(everything).toContain('links/to-file');
  });

  it('answers in comparePaths order, which is ripgrep sorting names by their UTF-8 bytes', async () => {
    const paths = await walk({ hidden: true, noIgnore: true });
    expect(paths.slice().sort(comparePaths)).toEqual(paths);
    expect(paths.indexOf('a/b.ts')).toBeLessThan(paths.indexOf('a-b/x.ts'));
    expect(paths.indexOf('emoji/\uFFFD.txt')).toBeLessThan(paths.indexOf('emoji/😀.txt'));
  });

  it('gives where each file lives, through links', async () => {
    const files = await walkWorkspace(workspace, { hidden: false, noIgnore: false, globs: [], path: 'links' });
    const viaLink = files.find((file) => file.path === 'links/to-src/lib/util.ts');
    expect(viaLink).toMatchObject({ resolvedPath: 'src/lib/util.ts', entry: { type: 'file' } });
    const bytes = await workspace.readBytes(viaLink!.resolvedPath, viaLink!.entry);
    expect(new TextDecoder().decode(bytes)).toBe('util\n');
  });

  it('walks a read-only root mounted in the workspace, with its own ignore files', async () => {
    const files = await walkWorkspace(workspace, { hidden: false, noIgnore: false, globs: [], path: 'mounted' });
    expect(files.map((file) => file.path)).toEqual(['mounted/a/SKILL.md']);
    const content = await workspace.readBytes(files[0]!.resolvedPath, files[0]!.entry);
    expect(new TextDecoder().decode(content)).toBe('#\n');
  });

  it('refuses a missing path, a path out of the workspace and an unknown type with their codes', async () => {
    await expect(walk({ path: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(walk({ path: '../x' })).rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(walk({ path: 'links/out' })).rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(walk({ type: 'typescript' })).rejects.toMatchObject({
      code: 'invalid_argument',
      details: { type: 'typescript' },
    });
  });

  it('lets the event loop run while it walks many files', async () => {
    const many = new Workspaces(SqliteDatabase.memory(), new MemoryObjectStore());
    many.create('many');
    const big = many.open('many');
    const changes = Array.from({ length: 20_000 }, (_, i) => ({
      op: 'write' as const,
      path: `d${i % 100}/f${i}.txt`,
      content: new Uint8Array([120]),
    }));
    await big.commit([...changes, { op: 'write', path: '.gitignore', content: new TextEncoder().encode('*.log\n') }]);
    let pauses = 0;
    const clock = new (class extends WorkBudget {
      override async pause() {
        pauses += 1;
        await super.pause();
      }
    })(Number.POSITIVE_INFINITY, 0);
    const files = await walkWorkspace(big, { hidden: false, noIgnore: false, globs: [] }, clock);
    expect(files).toHaveLength(20_000);
    expect(pauses).toBeGreaterThan(10);
  });
});

// glob over HTTP against ripgrep itself: one tree written to disk for `rg --files -g` and synced into
// a workspace, then every case's paths compared exactly; known divergences are asserted as such.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { syncWorkspaceChanges, type SyncedChange } from '../support/runner-sync.ts';
import { searchOutsideTree, searchSampleTree } from '../support/search-sample-tree.ts';
import { rgFiles, writeTreeToDisk, type Tree } from '../support/search-tree.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
let disk: ReturnType<typeof writeTreeToDisk>;
const WS = 'globbed';

/** Writes the tree through the runner protocol's sync: the one HTTP route that also makes symlinks. */
async function syncTree(ws: string, tree: Tree): Promise<void> {
  await syncWorkspaceChanges(
    server,
    ws,
    Object.entries(tree).map(([path, node]): SyncedChange => {
      if (typeof node === 'string') return { op: 'write', path, bytes: new TextEncoder().encode(node) };
      if ('link' in node) return { op: 'symlink', path, target: node.link };
      return { op: 'mkdir', path };
    }),
  );
}

const glob = (args: Record<string, unknown>, ws = WS) => server.call('POST', `/v1/workspaces/${ws}/tools/glob`, args);
const ok = async (args: Record<string, unknown>): Promise<string[]> => {
  const answer = await glob({ maxResults: 10_000, ...args });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.result.truncated).toBe(false);
  return answer.body.result.paths;
};
const rgArgs = (args: { pattern: string; path?: string; hidden?: boolean; noIgnore?: boolean }) => [
  '-g',
  args.pattern,
  ...(args.hidden ? ['--hidden'] : []),
  ...(args.noIgnore ? ['--no-ignore'] : []),
  ...(args.path === undefined ? [] : [args.path]),
];
/** What rg finds through links out of the tree; toolgate never follows them (the guard refuses them). */
const outside = (path: string) => /(^|\/)links\/out(\/|-file$)/.test(path);

beforeAll(async () => {
  disk = writeTreeToDisk(searchSampleTree, searchOutsideTree);
  await syncTree(WS, searchSampleTree);
}, 60_000);
afterAll(() => rmSync(disk.base, { recursive: true, force: true }));

const patterns = [
  '*',
  '**',
  '*.ts',
  '*.{ts,tsx}',
  '**/*.ts',
  'src/*.ts',
  'src/**',
  'src/**/*.ts',
  '/src/*.ts',
  '**/lib/*',
  '?.txt',
  '[a-c]*',
  '[!a-c]*.txt',
  '[^a-c]*.txt',
  '*.[tj]s',
  '**/c.*',
  'docs/**/*.md',
  '!*.ts',
  '!src',
  '!**/lib/**',
  'Makefile',
  'CMakeLists.txt',
  '*.py',
  'scripts/**/*.py',
  '**/deep/**',
  'deep',
  '*.md',
  '日本/*',
  '*é*',
  '*.log',
  'keep.log',
  'build/**',
  'node_modules/**',
  '.env',
  '.*',
  '.git/*',
  '**/.git/**',
  'links/**',
  'links/*',
  'to-src/*',
  '*/*',
  '*/*/*',
  'a*',
  'a/*',
  'a-b/*',
  '{src,docs}/**',
  'src/{lib,generated}/*',
  '*.{rs,toml}',
  'src',
  'src/',
  'lib/',
  '**/*.bak',
  '*.snap',
  'excluded.txt',
  'root-only.txt',
  '/root-only.txt',
  'space*',
  '*name*',
  'dir.with.dots/*',
  'UPPER.*',
  '*.TS',
  'emoji/*',
  '\\*',
  'links/to-*',
  '**/*.ts*',
  'pkg/**',
  '*.json',
];
const variants: Array<{ pattern: string; path?: string; hidden?: boolean; noIgnore?: boolean }> = [
  ...patterns.map((pattern) => ({ pattern })),
  ...['*', '.*', '*.ts', '.git/**', '**/.github/**', '!.git', '*.yml'].map((pattern) => ({ pattern, hidden: true })),
  ...['*', '*.log', 'build/*', '*.bak'].map((pattern) => ({ pattern, noIgnore: true })),
  { pattern: '*', hidden: true, noIgnore: true },
  { pattern: '*.ts', path: 'src' },
  { pattern: 'src/lib/*', path: 'src' },
  { pattern: '**', path: 'docs' },
  { pattern: '*', path: 'links' },
  { pattern: '*', path: 'src/lib' },
  { pattern: '*.ts', path: 'links/to-src' },
  { pattern: '*.md', path: 'lib.rs' },
  { pattern: '*', path: 'build' },
  { pattern: '*', path: '.hidden' },
  { pattern: '*', path: 'pkg' },
  { pattern: '*.log', path: 'pkg' },
  { pattern: '*', path: 'scripts/deep' },
  { pattern: '*', path: 'empty' },
];

/** Cases where glob and rg differ on purpose, each with both answers, so a change on either side is noticed. */
const divergences = new Map([
  [
    '?.txt',
    {
      reason:
        '"?" and "[...]" match one character (a UTF-16 unit) of a name; rg matches one byte, so it never matches a non-ASCII letter',
      rg: ['z.txt'],
      ours: ['emoji/\uFFFD.txt', 'z.txt', 'ä.txt'],
    },
  ],
]);

describe('glob lists what rg --files -g lists', () => {
  it('covers 60 and more cases', () => expect(variants.length).toBeGreaterThanOrEqual(60));

  for (const variant of variants) {
    const divergence = divergences.get(variant.pattern);
    if (divergence) {
      it(`${JSON.stringify(variant)} diverges: ${divergence.reason}`, async () => {
        expect(rgFiles(disk, rgArgs(variant)).paths).toEqual(divergence.rg);
        expect(await ok(variant)).toEqual(divergence.ours);
      });
      continue;
    }
    it(JSON.stringify(variant), async () => {
      const rg = rgFiles(disk, rgArgs(variant));
      expect(rg.stderr, 'rg refused the case').not.toMatch(/error parsing glob/);
      expect(await ok(variant)).toEqual(rg.paths.filter((path) => !outside(path)));
    });
  }

  it('diverges on purpose: rg follows links out of the tree, glob never reports them', async () => {
    const rg = rgFiles(disk, ['-g', '*']).paths;
    expect(rg.filter(outside)).toEqual(['links/out/more/s.ts', 'links/out/secret.txt', 'links/out-file']);
    const ours = await ok({ pattern: '*', hidden: true, noIgnore: true });
    expect(ours.filter(outside)).toEqual([]);
  });

  for (const pattern of ['{a', '[ab', '{a,{b}}', '[z-a]', 'a\\']) {
    it(`refuses the invalid glob ${pattern} as rg does`, async () => {
      expect(rgFiles(disk, ['-g', pattern]).status).toBe(2);
      const answer = await glob({ pattern });
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_argument']);
      expect(answer.body.error.message).toContain('is invalid');
    });
  }
});

describe('glob answers', () => {
  it('pages through every file exactly once', async () => {
    const all = await ok({ pattern: '*', hidden: true });
    const seen: string[] = [];
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page: { paths: string[]; truncated: boolean; nextOffset?: number } = (
        await glob({ pattern: '*', hidden: true, maxResults: 7, offset })
      ).body.result;
      expect(page.paths.length).toBeLessThanOrEqual(7);
      expect(page.truncated).toBe(page.nextOffset !== undefined);
      seen.push(...page.paths);
      offset = page.nextOffset;
    }
    expect(seen).toEqual(all);
  });

  it('puts the most recently changed first with sort recent', async () => {
    await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'src/lib/util.rs', content: 'x\n' });
    await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'lib.rs', content: 'y\n' });
    const recent = await ok({ pattern: '*.rs', sort: 'recent' });
    // A file reached through a link changed when its target did.
    expect(recent.slice(0, 3)).toEqual(['lib.rs', 'links/to-src/lib/util.rs', 'src/lib/util.rs']);
    expect(recent.slice().sort()).toEqual((await ok({ pattern: '*.rs' })).slice().sort());
  });
});

describe('glob refuses what it must', () => {
  const code = (answer: { status: number; body: any }) => [answer.status, answer.body?.error?.code];

  it('refuses hostile paths with the guard codes', async () => {
    expect(code(await glob({ pattern: '*', path: '../x' }))).toEqual([403, 'path_outside_workspace']);
    expect(code(await glob({ pattern: '*', path: 'a\u0000b' }))).toEqual([400, 'invalid_argument']);
    expect(code(await glob({ pattern: '*', path: 'links/out' }))).toEqual([403, 'path_outside_workspace']);
    expect(
      code(
        await glob({
          pattern: '*',
          path: 'links/loop/links/loop/links/loop/links/loop/links/loop/links/loop/links/loop/links/loop/links/loop',
        }),
      ),
    ).toEqual([400, 'symlink_loop']);
    expect(code(await glob({ pattern: '*', path: 'missing' }))).toEqual([404, 'not_found']);
  });

  it('lists /etc only as a workspace-absolute path inside the workspace', async () => {
    expect(code(await glob({ pattern: '*', path: '/etc' }))).toEqual([404, 'not_found']);
    expect(await ok({ pattern: '*', path: '/src/lib' })).toEqual(await ok({ pattern: '*', path: 'src/lib' }));
  });

  it('refuses an oversized pattern', async () => {
    expect(code(await glob({ pattern: 'a'.repeat(5_000) }))).toEqual([400, 'invalid_argument']);
    expect(code(await glob({ pattern: '{a,b}'.repeat(30) }))).toEqual([400, 'invalid_argument']);
  });

  it('answers 404 to a key whose scope does not hold the workspace', async () => {
    await server.call('PUT', '/v1/workspaces/elsewhere');
    const agent = await createKey(server, { role: 'agent', workspaces: ['elsewhere'] });
    const answer = await agent.call('POST', `/v1/workspaces/${WS}/tools/glob`, { pattern: '*' });
    expect(answer.status).toBe(404);
    expect((await agent.call('POST', '/v1/workspaces/elsewhere/tools/glob', { pattern: '*' })).status).toBe(200);
  });
});

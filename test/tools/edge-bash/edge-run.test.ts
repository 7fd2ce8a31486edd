// The edge engine of bash on its own, over a real workspace (SQLite and an object store): commands
// read the workspace's files, their changes land in one conditional commit through the guard, a file
// the API changed meanwhile is a conflict, and no path a command names reaches outside the workspace.
import { readFileSync } from 'node:fs';
import { Bash } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { MemoryObjectStore } from '../../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../../src/storage/node/sqlite-database.ts';
import { EDGE_WORKSPACE, EdgeCopy } from '../../../src/tools/edge-bash/edge-copy.ts';
import { edgeSource, runOnEdge } from '../../../src/tools/edge-bash/edge-run.ts';
import { syncChanges } from '../../../src/workspace/sync-changes.ts';
import { Workspaces } from '../../../src/workspace/workspaces.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

async function workspaceWith(files: Record<string, string>, links: Record<string, string> = {}) {
  const workspaces = new Workspaces(SqliteDatabase.memory(), new MemoryObjectStore());
  workspaces.create('ws');
  // Another workspace of the same server: nothing a command in `ws` does may show its contents.
  workspaces.create('other');
  await workspaces.open('other').commit([{ op: 'write', path: 'secret.txt', content: bytes('OTHER-SECRET\n') }]);
  await workspaces
    .open('ws')
    .commit([
      ...Object.entries(files).map(([path, content]) => ({ op: 'write' as const, path, content: bytes(content) })),
      ...Object.entries(links).map(([path, target]) => ({ op: 'symlink' as const, path, target })),
    ]);
  const open = () => workspaces.open('ws');
  const run = (command: string, cwd = '') =>
    runOnEdge(open(), { command, cwd, env: {}, timeoutMs: 10_000, maxFileBytes: 1024 * 1024 });
  const read = async (path: string) => {
    const workspace = open();
    const entry = workspace.entry(path);
    return entry?.type === 'file' ? new TextDecoder().decode(await workspace.readBytes(path, entry)) : entry?.type;
  };
  const listing = () =>
    open()
      .manifestEntries()
      .map((entry) => `${entry.type} ${entry.path}${entry.target === null ? '' : ` -> ${entry.target}`}`);
  return { open, run, read, listing };
}

describe('the edge engine', () => {
  it('runs pipelines over the workspace in the handler, at /workspace as on a runner', async () => {
    const ws = await workspaceWith({
      'src/a.ts': '// TODO one\nconst a = 1;\n',
      'src/b.ts': '// TODO two\n',
      'README.md': 'x\n',
    });
    expect(await ws.run('grep -rn TODO src | wc -l')).toMatchObject({ stdout: '2\n', stderr: '', exitCode: 0 });
    expect((await ws.run('pwd && ls', 'src')).stdout).toBe('/workspace/src\na.ts\nb.ts\n');
    expect((await ws.run('sort -r src/*.ts | head -1')).stdout).toBe('const a = 1;\n');
    const failed = await ws.run('cat missing.txt');
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toBe('cat: missing.txt: No such file or directory\n');
    // Reading changes nothing.
    expect(failed.sync).toEqual({ committed: [], conflicts: [], skipped: [], version: null });
  });

  it('commits every change a command makes in one commit: writes, directories, moves, deletes, links', async () => {
    const ws = await workspaceWith({ 'a.txt': 'a\n', 'old/x.txt': 'x\n', 'gone.txt': 'g\n' }, { link: 'a.txt' });
    const before = ws.open().manifestEntries().length;
    const outcome = await ws.run(
      'echo new > b.txt && mkdir -p d/e && echo deep > d/e/f.txt && mv old moved && rm gone.txt && echo more >> link && ln -s b.txt l2',
    );
    expect(outcome.exitCode).toBe(0);
    expect(outcome.sync.conflicts).toEqual([]);
    expect(outcome.sync.version).toBe(2);
    expect(before).toBe(5);
    expect(ws.listing()).toEqual([
      'file a.txt',
      'file b.txt',
      'dir d',
      'dir d/e',
      'file d/e/f.txt',
      'symlink l2 -> b.txt',
      // Appending through a link wrote its target; the link stays a link.
      'symlink link -> a.txt',
      'dir moved',
      'file moved/x.txt',
    ]);
    expect(await ws.read('a.txt')).toBe('a\nmore\n');
    expect(await ws.read('moved/x.txt')).toBe('x\n');
  });

  it('commits a change made through one name of a hard-linked file under each of its names, as a runner syncs its disk', async () => {
    const ws = await workspaceWith({ 'a.txt': 'a\n', 'dir/b.txt': 'b\n', 'c.txt': 'c\n' });
    // Appended through the new name, truncated through a name moved since, written through the old one.
    const outcome = await ws.run(
      'ln a.txt hard.txt && echo more >> hard.txt && ln dir/b.txt b2 && mv dir moved && : > b2 && ln c.txt c2 && echo new > c.txt',
    );
    expect(outcome.exitCode).toBe(0);
    expect(await ws.read('a.txt')).toBe('a\nmore\n');
    expect(await ws.read('hard.txt')).toBe('a\nmore\n');
    expect(await ws.read('moved/b.txt')).toBe('');
    expect(await ws.read('b2')).toBe('');
    expect(await ws.read('c.txt')).toBe('new\n');
    expect(await ws.read('c2')).toBe('new\n');
  });

  it('leaves a file the API changed meanwhile as the API wrote it, and names it a conflict', async () => {
    const ws = await workspaceWith({ 'f.txt': 'base\n', 'g.txt': 'g\n' });
    const copy = await EdgeCopy.of(edgeSource(ws.open()));
    const bash = new Bash({ fs: copy.fs, cwd: EDGE_WORKSPACE });
    expect((await bash.exec('echo edge > f.txt && echo edge > g.txt')).exitCode).toBe(0);
    await ws.open().commit([{ op: 'write', path: 'f.txt', content: bytes('api\n') }]);
    const sync = await syncChanges(ws.open(), (await copy.changes()).changes);
    expect(sync).toMatchObject({ committed: ['g.txt'], conflicts: ['f.txt'] });
    expect(await ws.read('f.txt')).toBe('api\n');
    expect(await ws.read('g.txt')).toBe('edge\n');
  });

  it('gives a redirect into a missing directory back to a runner on auto, and refuses it on engine edge, keeping nothing', async () => {
    const ws = await workspaceWith({ 'a.txt': 'a\n' });
    const command = 'echo kept > kept.txt; echo x > new/dir/out.txt; echo after';
    const run = { command, cwd: '', env: {}, timeoutMs: 10_000, maxFileBytes: 1024 * 1024 };
    expect(await runOnEdge(ws.open(), { ...run, orRunner: true })).toBeUndefined();
    await expect(runOnEdge(ws.open(), run)).rejects.toMatchObject({
      code: 'invalid_argument',
      details: { path: 'new/dir/out.txt' },
    });
    expect(ws.listing()).toEqual(['file a.txt']);
    // touch and tee report it themselves, as GNU's do, and the script goes on.
    const outcome = await ws.run('touch new/x.txt; echo x | tee new/y.txt; echo after');
    expect(outcome).toMatchObject({
      stdout: 'x\nafter\n',
      stderr: "touch: cannot touch 'new/x.txt': No such file or directory\ntee: new/y.txt: No such file or directory\n",
      exitCode: 0,
    });
    expect(ws.listing()).toEqual(['file a.txt']);
  });

  it('keeps what write_file refuses out of the workspace, naming each path skipped and why', async () => {
    const ws = await workspaceWith({ 'a.txt': 'a\n' });
    const outcome = await ws.run(
      'mkdir -p .ssh .git/hooks && echo k > .ssh/id_rsa && echo h > .git/hooks/pre-commit && echo ok > fine.txt',
    );
    expect(outcome.sync.committed).toEqual(['.git', 'fine.txt']);
    expect(outcome.sync.skipped.map((skip) => skip.path).sort()).toEqual([
      '.git/hooks',
      '.git/hooks/pre-commit',
      '.ssh',
      '.ssh/id_rsa',
    ]);
    for (const skip of outcome.sync.skipped) expect(skip.reason).toMatch(/may not write/);
    expect(ws.listing()).toEqual(['dir .git', 'file a.txt', 'file fine.txt']);
  });
});

/** Inputs of test/fixtures/conformance/paths/cases.json a command line can carry (no NUL), once each. */
function hostilePaths(): string[] {
  const data = JSON.parse(
    readFileSync(new URL('../../fixtures/conformance/paths/cases.json', import.meta.url), 'utf8'),
  ) as { groups: { cases: { input?: unknown; platform?: string }[] }[] };
  const inputs = new Set<string>();
  for (const group of data.groups)
    for (const test of group.cases)
      if (typeof test.input === 'string' && test.platform !== 'windows' && !test.input.includes('\0'))
        inputs.add(test.input);
  return [...inputs];
}

const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

describe('the edge engine and the path-guard conformance cases', () => {
  const paths = hostilePaths();

  it('has the fixture cases to run', () => {
    expect(paths.length).toBeGreaterThan(200);
  });

  it('reads nothing outside the workspace and writes only where write_file may, whatever path a command names', async () => {
    // What the server's host holds: an edge command never sees it.
    const hostPasswd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
    for (const path of paths) {
      // Each path in a workspace of its own, so what one case leaves never shapes the next.
      const ws = await workspaceWith({ 'inside.txt': 'INSIDE\n', 'dir/keep.txt': 'keep\n' });
      const command = [
        `cat -- ${quoted(path)}`,
        `ls -la -- ${quoted(path)}`,
        `cd -- ${quoted(path)} && cat secret.txt passwd`,
        `echo pwned > ${quoted(path)}`,
        `ln -s ${quoted(path)} probe-link && cat probe-link`,
        `cp inside.txt ${quoted(path)}`,
        `cp inside.txt moved.txt && mv moved.txt ${quoted(path)}`,
      ]
        .map((part) => `( ${part} )`)
        .join('; ');
      const outcome = await ws.run(command);
      const seen = outcome.stdout + outcome.stderr;
      expect(seen, command).not.toContain('OTHER-SECRET');
      if (hostPasswd !== '') expect(seen, command).not.toContain(hostPasswd);
      // Every path committed is one write_file could write: the guard passes it, unchanged.
      for (const committed of outcome.sync.committed) {
        const resolved = await ws.open().resolve(committed, 'write', { followFinalSymlink: false });
        expect(resolved.path, command).toBe(committed);
      }
      // Whatever landed is inside the workspace: each entry's own path passes the guard as itself.
      expect(await ws.read('dir/keep.txt'), command).toBe('keep\n');
      for (const entry of ws.open().manifestEntries())
        expect((await ws.open().resolve(entry.path, 'read', { followFinalSymlink: false })).path).toBe(entry.path);
    }
  }, 120_000);
});

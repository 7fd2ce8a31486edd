// A file tree for search tests, laid out on disk for ripgrep and in a workspace for toolgate, and rg itself.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A file's text, a symlink's target, or an empty directory. */
export type TreeNode = string | { link: string } | { dir: true };
export type Tree = Record<string, TreeNode>;

/** Workspace changes that make the tree (writes, links, empty directories), in one commit. */
export function treeChanges(tree: Tree) {
  return Object.entries(tree).map(([path, node]) => {
    if (typeof node === 'string') return { op: 'write' as const, path, content: new TextEncoder().encode(node) };
    if ('link' in node) return { op: 'symlink' as const, path, target: node.link };
    return { op: 'mkdir' as const, path };
  });
}

/** Writes the tree under a new temporary directory: `root` holds it, `outside` sits beside it (links out land there). */
export function writeTreeToDisk(tree: Tree, outside: Tree = {}): { base: string; root: string; home: string } {
  const base = mkdtempSync(join(tmpdir(), 'toolgate-search-'));
  const root = join(base, 'root');
  const home = join(base, 'home');
  mkdirSync(root);
  mkdirSync(home);
  for (const [prefix, nodes] of [
    [root, tree],
    [join(base, 'outside'), outside],
  ] as const) {
    for (const [path, node] of Object.entries(nodes)) {
      const at = join(prefix, path);
      if (typeof node === 'object' && 'dir' in node) {
        mkdirSync(at, { recursive: true });
        continue;
      }
      mkdirSync(dirname(at), { recursive: true });
      if (typeof node === 'string') writeFileSync(at, node);
      else symlinkSync(node.link, at);
    }
  }
  return { base, root, home };
}

export interface RgFiles {
  paths: string[];
  status: number | null;
  stderr: string;
}

/**
 * `rg --files --no-require-git --sort path -L ARGS` in `root`, with HOME an empty directory so no
 * global gitignore applies. Fails with a clear message where ripgrep is not installed.
 */
export function rgFiles(disk: { root: string; home: string }, args: readonly string[]): RgFiles {
  const run = spawnSync('rg', ['--files', '--no-require-git', '--sort', 'path', '-L', ...args], {
    cwd: disk.root,
    env: { PATH: process.env.PATH ?? '', HOME: disk.home },
    encoding: 'utf8',
  });
  if (run.error) throw new Error(`ripgrep (rg) is needed by this test and could not run: ${run.error.message}`);
  const paths = run.stdout.split('\n').filter((line) => line !== '');
  return { paths, status: run.status, stderr: run.stderr };
}

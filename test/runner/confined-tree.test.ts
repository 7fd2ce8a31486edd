// Host operations on a workspace copy never follow a link a command made: not at the last
// component, not at any parent, not while removing a tree.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfinedTree, removeTree, withTree } from '../../src/runner/node/confined-tree.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy with a real file and directory, links to a host folder beside them, and that folder. */
function fixture() {
  const base = mkdtempSync(join(tmpdir(), 'toolgate-confined-'));
  dirs.push(base);
  const outside = join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'host secret');
  const copy = join(base, 'copy');
  mkdirSync(join(copy, 'real'), { recursive: true });
  writeFileSync(join(copy, 'real', 'a.txt'), 'a');
  symlinkSync(outside, join(copy, 'dirlink'));
  symlinkSync(join(outside, 'secret.txt'), join(copy, 'filelink'));
  return { copy, outside };
}

const code = (work: () => unknown): string | undefined => {
  try {
    work();
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
};

describe('ConfinedTree', () => {
  it('refuses to go through a link at a parent, and to read through one at the last component', async () => {
    const { copy, outside } = fixture();
    await withTree(copy, (tree) => {
      // Opened as a directory without following, a link is refused (Linux says ENOTDIR or ELOOP).
      expect(['ELOOP', 'ENOTDIR']).toContain(code(() => tree.dir('dirlink')));
      expect(['ELOOP', 'ENOTDIR']).toContain(code(() => tree.at('dirlink/secret.txt')));
      expect(code(() => tree.readFile('filelink'))).toBe('ELOOP');
      expect(tree.readdir('dirlink')).toEqual([]);
      expect(tree.lstat('dirlink/secret.txt')).toBeUndefined();
      expect(tree.lstat('filelink')?.isSymbolicLink()).toBe(true);
      expect(tree.readFile('real/a.txt').toString()).toBe('a');
    });
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('keeps acting on the directory it opened when a command swaps it for a link afterwards', () => {
    const { copy, outside } = fixture();
    const tree = new ConfinedTree(copy);
    try {
      const host = tree.at('real/b.txt');
      // The swap: the directory moves aside and a link to the host folder takes its name.
      rmSync(join(copy, 'moved'), { recursive: true, force: true });
      renameSync(join(copy, 'real'), join(copy, 'moved'));
      symlinkSync(outside, join(copy, 'real'));
      writeFileSync(host, 'written', { flag: 'wx' });
    } finally {
      tree.close();
    }
    expect(readFileSync(join(copy, 'moved', 'b.txt'), 'utf8')).toBe('written');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('removes a tree holding links without removing anything they point to', () => {
    const { copy, outside } = fixture();
    symlinkSync(outside, join(copy, 'real', 'nested-link'));
    removeTree(copy);
    expect(existsSync(copy)).toBe(false);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(lstatSync(join(outside, 'secret.txt')).isFile()).toBe(true);
  });
});

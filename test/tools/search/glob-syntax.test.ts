// ripgrep's glob dialect: {a,b} expansion with ripgrep's anchoring, and the globs ripgrep refuses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandGlob, MAX_GLOB_EXPANSIONS } from '../../../src/tools/search/glob-syntax.ts';
import { rgFiles } from '../../support/search-tree.ts';

describe('expandGlob', () => {
  it('expands each {a,b} group, keeping classes and escapes whole', () => {
    expect(expandGlob('*.{ts,tsx}')).toEqual(['*.ts', '*.tsx']);
    expect(expandGlob('{a,b}/{c,d}')).toEqual(['a/c', 'a/d', 'b/c', 'b/d']);
    expect(expandGlob('!*.{js,}')).toEqual(['!*.js', '!*.']);
    expect(expandGlob('[{,}]x')).toEqual(['[{,}]x']);
    expect(expandGlob('\\{a,b\\}')).toEqual(['\\{a,b\\}']);
    // A '}' with no '{' before it is a literal, as ripgrep takes it.
    expect(expandGlob('a}')).toEqual(['a}']);
  });

  it('anchors an alternative without "/" when the glob as written has one, as ripgrep decides on the whole glob', () => {
    expect(expandGlob('{src/*.ts,*.md}')).toEqual(['src/*.ts', '/*.md']);
    expect(expandGlob('{a,b}/')).toEqual(['a/', 'b/']);
  });

  it('refuses a glob that would expand into too many patterns', () => {
    expect(() => expandGlob('{a,b}'.repeat(11))).toThrow(`more than ${MAX_GLOB_EXPANSIONS} patterns`);
  });

  const dir = () => mkdtempSync(join(tmpdir(), 'toolgate-glob-'));
  for (const [glob, why] of [
    ['{a', "opens '{' without closing"],
    ['{a,{b,c}}', 'nests'],
    ['[ab', "character class '['"],
    ['[z-a]', 'runs backwards'],
    ['a\\', 'lone backslash'],
  ] as const) {
    it(`refuses ${glob} (${why}) as ripgrep does`, () => {
      expect(() => expandGlob(glob)).toThrow(why);
      const root = dir();
      try {
        const rg = rgFiles({ root, home: root }, ['-g', glob]);
        expect(rg.status).toBe(2);
        expect(rg.stderr).toMatch(/error parsing glob/);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});

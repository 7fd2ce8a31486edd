// ripgrep's type table as data, and -t NAME on file names.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fileTypeFilter } from '../../../src/tools/search/file-type-filter.ts';
import { fileTypes } from '../../../src/tools/search/file-types.ts';

describe('fileTypes', () => {
  it('is the table `rg --type-list` prints, every type and glob', () => {
    const run = spawnSync('rg', ['--type-list'], { encoding: 'utf8' });
    if (run.error) throw new Error(`ripgrep (rg) is needed by this test and could not run: ${run.error.message}`);
    const listed = run.stdout
      .trim()
      .split('\n')
      .map((line) => `${line.slice(0, line.indexOf(': '))}: ${line.slice(line.indexOf(': ') + 2)}`);
    expect(Object.entries(fileTypes).map(([name, globs]) => `${name}: ${globs.join(', ')}`)).toEqual(listed);
    expect(Object.keys(fileTypes).length).toBeGreaterThan(40);
  });
});

describe('fileTypeFilter', () => {
  it('matches file names by the type globs, case-sensitively', () => {
    const make = fileTypeFilter('make');
    expect(['Makefile', 'makefile', 'GNUmakefile', 'rules.mk', 'Makefile.am'].every(make)).toBe(true);
    expect(make('MAKEFILE')).toBe(false);
    const c = fileTypeFilter('c');
    expect(['a.c', 'a.h', 'a.H', 'config.h.in'].every(c)).toBe(true);
    expect(c('a.C')).toBe(false);
    expect(fileTypeFilter('cmake')('CMakeLists.txt')).toBe(true);
    expect(fileTypeFilter('ts')('x.d.ts')).toBe(true);
    expect(fileTypeFilter('all')('x.rs')).toBe(true);
  });

  it('refuses an unknown type, naming some it knows', () => {
    expect(() => fileTypeFilter('typescript')).toThrow(/not a ripgrep file type; use one of ts, js, py/);
    expect(() => fileTypeFilter('constructor')).toThrow(/not a ripgrep file type/);
  });
});

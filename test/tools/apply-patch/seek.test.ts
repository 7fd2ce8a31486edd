// seekSequence: Codex's ladder of passes, its start and end-of-file rules, and its speed on large files.
import { describe, expect, it } from 'vitest';
import { LineIndex } from '../../../src/tools/apply-patch/line-index.ts';
import { seekSequence, sequenceMatchesAt } from '../../../src/tools/apply-patch/seek.ts';
import { foldPunctuation } from '../../../src/tools/apply-patch/seek-passes.ts';

describe('seekSequence', () => {
  it('matches an empty pattern at the start it is given', async () => {
    expect(await seekSequence(['a', 'b'], [], 1, false)).toBe(1);
    expect(await seekSequence([], [], 0, true)).toBe(0);
  });

  it('finds nothing when the pattern is longer than the file', async () => {
    expect(await seekSequence(['one'], ['one', 'two'], 0, false)).toBeUndefined();
  });

  it('finds an exact run at or after the start', async () => {
    const lines = ['x', 'a', 'b', 'x', 'a', 'b'];
    expect(await seekSequence(lines, ['a', 'b'], 0, false)).toBe(1);
    expect(await seekSequence(lines, ['a', 'b'], 2, false)).toBe(4);
    expect(await seekSequence(lines, ['a', 'b'], 5, false)).toBeUndefined();
  });

  it('ignores trailing whitespace, then surrounding whitespace', async () => {
    expect(await seekSequence(['foo   ', 'bar\t'], ['foo', 'bar'], 0, false)).toBe(0);
    expect(await seekSequence(['  foo  ', '\tbar'], ['foo', 'bar'], 0, false)).toBe(0);
    expect(await seekSequence(['foo\r'], ['foo'], 0, false)).toBe(0);
  });

  it('folds Unicode dashes, quotes and spaces to ASCII as a last resort', async () => {
    const lines = ['const title = “Hello – world”;', 'it’s\u00a0fine', 'x \u2212 y\u3000'];
    expect(await seekSequence(lines, ['const title = "Hello - world";', "it's fine", 'x - y'], 0, false)).toBe(0);
    expect(foldPunctuation('\u2010\u2011\u2012\u2013\u2014\u2015\u2212')).toBe('-------');
    expect(foldPunctuation('\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f')).toBe('\'\'\'\'""""');
    expect(foldPunctuation('\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000')).toBe(
      ' '.repeat(13),
    );
    expect(foldPunctuation('… « » \u2001')).toBe('… « » \u2001');
  });

  it('tries every position with one pass before the next, so a later exact match beats an earlier fuzzy one', async () => {
    const lines = ['  value = 1', 'other', 'value = 1'];
    expect(await seekSequence(lines, ['value = 1'], 0, false)).toBe(2);
    const dashes = ['a – b', 'a - b  '];
    expect(await seekSequence(dashes, ['a - b'], 0, false)).toBe(1);
  });

  it('with endOfFile tries only the position that ends at the last line, ignoring the start', async () => {
    const lines = ['end', 'middle', 'end'];
    expect(await seekSequence(lines, ['end'], 0, true)).toBe(2);
    expect(await seekSequence(lines, ['end'], 3, true)).toBe(2);
    expect(await seekSequence(['a', 'b', ''], ['b'], 0, true)).toBeUndefined();
    expect(await seekSequence(['a', 'b  '], ['b'], 0, true)).toBe(1);
  });

  it('reuses one LineIndex for many seeks and refuses one built over other lines', async () => {
    const lines = ['  a', '  b', '  c'];
    const folds = new LineIndex(lines);
    expect(await seekSequence(lines, ['b'], 0, false, folds)).toBe(1);
    expect(await seekSequence(lines, ['c'], 0, false, folds)).toBe(2);
    await expect(seekSequence(['  x'], ['x'], 0, false, folds)).rejects.toThrow(/another array/);
  });

  it('finds every block in a 5,000-line file where every seek needs the forgiving passes', async () => {
    const lines = Array.from({ length: 5000 }, (_, index) => `    line ${index} – value  `)
      .join('\n')
      .split('\n');
    const seekAll = async (): Promise<number[]> => {
      const folds = new LineIndex(lines);
      const found: number[] = [];
      for (let index = 10, cursor = 0; index < 5000; index += 25) {
        const at =
          (await seekSequence(lines, [`line ${index} - value`, `line ${index + 1} - value`], cursor, false, folds)) ??
          -1;
        found.push(at);
        cursor = at + 2;
      }
      return found;
    };
    const found = await seekAll();
    expect(found).toEqual(Array.from({ length: 200 }, (_, index) => 10 + 25 * index));
  });
});

describe('sequenceMatchesAt', () => {
  it('checks one position under any pass', async () => {
    const lines = ['a', '  b  ', 'c'];
    expect(await sequenceMatchesAt(lines, ['b', 'c'], 1)).toBe(true);
    expect(await sequenceMatchesAt(lines, ['b', 'c'], 0)).toBe(false);
    expect(await sequenceMatchesAt(lines, ['c', 'd'], 2)).toBe(false);
    expect(await sequenceMatchesAt(lines, ['a'], -1)).toBe(false);
  });
});

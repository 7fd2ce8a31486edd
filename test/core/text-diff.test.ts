// The windowed diff of a patched file: always a correct unified diff of before → after.
import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyHunksWithRanges } from '../../src/tools/apply-patch/apply-hunks.ts';
import { fileDiff } from '../../src/core/text-diff.ts';
import type { Hunk } from '../../src/tools/apply-patch/patch.ts';

const hunkAt = (lines: string[], at: number, replacement: string[], finalNewline?: boolean): Hunk => ({
  anchors: [],
  oldLines: [lines[at]!],
  newLines: replacement,
  endOfFile: false,
  line: 1,
  ...(finalNewline === undefined ? {} : { finalNewline }),
});
const whole = (before: string, after: string, oldName = 'a/f', newName = 'b/f') =>
  createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
/** A small text of lines drawn from few values, so that diffs have common lines to find. */
const text = fc
  .tuple(fc.array(fc.constantFrom('a', 'b', 'c', 'line', ''), { maxLength: 30 }), fc.boolean(), fc.boolean())
  .map(([lines, crlf, finalNewline]) => {
    const eol = crlf ? '\r\n' : '\n';
    return lines.join(eol) + (finalNewline && lines.length > 0 ? eol : '');
  });

describe('fileDiff', () => {
  it('equals the whole-file diff for separated changes', async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i}`);
    const before = `${lines.join('\n')}\n`;
    const hunks = [5, 20, 23, 50].map((at) => hunkAt(lines, at, [`changed ${at}`, `added ${at}`]));
    const { text: after, ranges } = await applyHunksWithRanges('f', before, hunks);
    expect(await fileDiff('a/f', 'b/f', before, after, ranges)).toBe(whole(before, after));
  });

  it('is a diff that turns before into after, for any set of hunks, CRLF and missing final newlines included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 80 }),
        fc.uniqueArray(fc.nat(79), { maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.array(fc.constantFrom('x', 'y', 'line 3', ''), { maxLength: 3 }), { minLength: 12, maxLength: 12 }),
        fc.option(fc.boolean(), { nil: undefined }),
        async (count, positions, crlf, finalNewline, replacements, setsFinalNewline) => {
          const lines = Array.from({ length: count }, (_, i) => `line ${i}`);
          const eol = crlf ? '\r\n' : '\n';
          const before = lines.join(eol) + (finalNewline ? eol : '');
          const hunks = positions
            .filter((at) => at < count)
            .sort((a, b) => a - b)
            .map((at, index) => hunkAt(lines, at, replacements[index]!, index === 0 ? setsFinalNewline : undefined));
          const { text: after, ranges } = await applyHunksWithRanges('f', before, hunks);
          const diff = await fileDiff('a/f', 'b/f', before, after, ranges);
          expect(applyPatch(before, diff)).toBe(after);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('diffs a whole file (an add, a delete, a file replaced) into a diff that turns before into after', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (before, after) => {
        const diff = await fileDiff('a/f', 'b/f', before, after);
        expect(applyPatch(before, diff)).toBe(after);
      }),
      { numRuns: 2000 },
    );
  });

  it('shows an added or deleted file as jsdiff does', async () => {
    await fc.assert(
      fc.asyncProperty(text, async (contents) => {
        expect(await fileDiff('/dev/null', 'b/f', '', contents)).toBe(whole('', contents, '/dev/null', 'b/f'));
        expect(await fileDiff('a/f', '/dev/null', contents, '')).toBe(whole(contents, '', 'a/f', '/dev/null'));
      }),
      { numRuns: 500 },
    );
  });

  it('shows a last line that only gains or loses its newline', async () => {
    const gains = await applyHunksWithRanges('f', 'a\nb', [hunkAt(['a', 'b'], 0, ['A'], true)]);
    expect(gains.text).toBe('A\nb\n');
    expect(await fileDiff('a/f', 'b/f', 'a\nb', gains.text, gains.ranges)).toBe(whole('a\nb', gains.text));
    const appended = await applyHunksWithRanges('f', 'a', [{ ...hunkAt([], 0, ['b']), oldLines: [] }]);
    expect(appended.text).toBe('a\nb');
    expect(applyPatch('a', await fileDiff('a/f', 'b/f', 'a', appended.text, appended.ranges))).toBe('a\nb');
  });

  it('replaces a 20,000-line file by another in linear time, as one block where the LCS would be too large', async () => {
    const before = Array.from({ length: 20_000 }, (_, i) => `line ${i}\n`).join('');
    const after = Array.from({ length: 20_000 }, (_, i) => `other ${i}\n`).join('');
    const diff = await fileDiff('a/f', 'b/f', before, after);
    expect(diff.split('\n')[2]).toBe('@@ -1,20000 +1,20000 @@');
    expect(applyPatch(before, diff)).toBe(after);
  });
});

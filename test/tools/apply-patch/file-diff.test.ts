// The windowed diff of a patched file: always a correct unified diff of before → after.
import { applyPatch, createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyHunksWithRanges } from '../../../src/tools/apply-patch/apply-hunks.ts';
import { fileDiff } from '../../../src/tools/apply-patch/file-diff.ts';
import type { Hunk } from '../../../src/tools/apply-patch/patch.ts';

const hunkAt = (lines: string[], at: number, replacement: string[]): Hunk => ({
  anchors: [],
  oldLines: [lines[at]!],
  newLines: replacement,
  endOfFile: false,
  line: 1,
});

describe('fileDiff', () => {
  it('equals the whole-file diff for separated changes', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i}`);
    const before = `${lines.join('\n')}\n`;
    const hunks = [5, 20, 23, 50].map((at) => hunkAt(lines, at, [`changed ${at}`, `added ${at}`]));
    const { text: after, ranges } = applyHunksWithRanges('f', before, hunks);
    const whole = createTwoFilesPatch('a/f', 'b/f', before, after, undefined, undefined, {
      context: 3,
      headerOptions: FILE_HEADERS_ONLY,
    });
    expect(fileDiff('a/f', 'b/f', before, after, ranges)).toBe(whole);
  });

  it('is a diff that turns before into after, for any set of hunks, CRLF and missing final newlines included', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 80 }),
        fc.uniqueArray(fc.nat(79), { maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.array(fc.constantFrom('x', 'y', 'line 3', ''), { maxLength: 3 }), { minLength: 12, maxLength: 12 }),
        (count, positions, crlf, finalNewline, replacements) => {
          const lines = Array.from({ length: count }, (_, i) => `line ${i}`);
          const eol = crlf ? '\r\n' : '\n';
          const before = lines.join(eol) + (finalNewline ? eol : '');
          const hunks = positions
            .filter((at) => at < count)
            .sort((a, b) => a - b)
            .map((at, index) => hunkAt(lines, at, replacements[index]!));
          const { text: after, ranges } = applyHunksWithRanges('f', before, hunks);
          const diff = fileDiff('a/f', 'b/f', before, after, ranges);
          expect(applyPatch(before, diff)).toBe(after);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

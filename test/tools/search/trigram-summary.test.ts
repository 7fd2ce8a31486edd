// The trigram summary kept beside cached contents: never turns away content that holds the literal.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { literalTrigrams, mayHoldLiteral, trigramSummary } from '../../../src/tools/search/trigram-summary.ts';

const utf8 = new TextEncoder();

/** The summary as a search sees it: none on the first search of the content, built on the second. */
function summaryOf(bytes: Uint8Array): Uint32Array {
  expect(trigramSummary(bytes)).toBeUndefined();
  const summary = trigramSummary(bytes)!;
  expect(summary).toBeInstanceOf(Uint32Array);
  expect(trigramSummary(bytes)).toBe(summary);
  return summary;
}

describe('trigram summaries', () => {
  it('say "maybe" for every literal the content holds, in either ASCII case', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('a', 'B', 'c', 'é', '_', ' ', '\n', '€', 'Z', '1'),
          minLength: 3,
          maxLength: 3000,
        }),
        fc.nat(),
        fc.integer({ min: 3, max: 40 }),
        fc.boolean(),
        (text, start, length, upper) => {
          const bytes = utf8.encode(text);
          if (bytes.length < 3) return;
          const summary = summaryOf(bytes);
          const from = start % Math.max(1, bytes.length - 2);
          const literal = bytes.slice(from, Math.min(bytes.length, from + length));
          const cased = upper ? literal.map((byte) => (byte >= 0x61 && byte <= 0x7a ? byte - 0x20 : byte)) : literal;
          expect(mayHoldLiteral(summary, literalTrigrams(literal))).toBe(true);
          expect(mayHoldLiteral(summary, literalTrigrams(cased))).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('turn away most content that lacks the literal', () => {
    const words = ['const', 'return', 'value', 'handler', 'workspace', 'manifest', 'blob', 'commit'];
    let rejected = 0;
    for (let file = 0; file < 200; file++) {
      const text = Array.from({ length: 600 }, (_, i) => words[(i * 7 + file) % words.length]).join(' ');
      if (!mayHoldLiteral(summaryOf(utf8.encode(text)), literalTrigrams(utf8.encode('needle_in_the_tree_42'))))
        rejected += 1;
    }
    expect(rejected).toBe(200);
  });

  it('are not kept for content too small or over 1 MiB', () => {
    expect(trigramSummary(utf8.encode('ab'))).toBeUndefined();
    expect(trigramSummary(utf8.encode('ab'))).toBeUndefined();
    const large = new Uint8Array(1024 * 1024 + 1).fill(0x61);
    expect(trigramSummary(large)).toBeUndefined();
    expect(trigramSummary(large)).toBeUndefined();
  });
});

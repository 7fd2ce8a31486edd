import { describe, expect, it } from 'vitest';
import { byteLength } from '../../src/core/call-answer.ts';

/** A small seeded generator, so a failure names a case that can be run again. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('byteLength (the metered bytes of an answer)', () => {
  it('equals the UTF-8 encoding length, lone surrogates counted as the encoder writes them', () => {
    const cases = [
      '',
      'abc',
      'é',
      '€',
      '😀',
      '\ud800',
      '\udc00',
      'a\ud800b',
      '\ud800\ud800',
      '\udbff\udfff',
      'x'.repeat(4096),
    ];
    const random = generator(17);
    for (let index = 0; index < 5000; index += 1) {
      let text = '';
      // Mostly the ranges that change the count: ASCII, 2-byte, 3-byte, surrogates.
      for (let unit = 0; unit < 12; unit += 1)
        text += String.fromCharCode(
          [0x7f, 0x7ff, 0xffff, 0xdfff][Math.floor(random() * 4)]! & Math.floor(random() * 65536),
        );
      cases.push(text);
    }
    for (const text of cases)
      expect([text, byteLength(text)]).toEqual([text, new TextEncoder().encode(text).byteLength]);
  });
});

describe('byteLength of long answers', () => {
  it('counts texts longer than its buffer, with pairs, 3-byte and lone surrogates at every offset', () => {
    for (const unit of ['😀', '€', 'é', '\ud800', 'x']) {
      for (const pad of [0, 1, 2, 3]) {
        const text = 'a'.repeat(pad) + unit.repeat(40_000);
        expect(byteLength(text)).toBe(new TextEncoder().encode(text).byteLength);
      }
    }
  });
});

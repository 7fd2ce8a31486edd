// Finding a literal in a file's UTF-8 bytes, so that most files are rejected without being decoded.

import { literalTrigrams, mayHoldLiteral, trigramSummary } from './trigram-summary.ts';

const utf8 = new TextEncoder();

/**
 * Bytes of source code and prose from most to least frequent: the search scans for the needle's
 * rarest byte, so the scan stops seldom (bytes not listed are rarer than any listed).
 */
const COMMON_BYTES = ' etaoinsrlhdcu\npmf.g(),y_=;b"w\'v/:-k{}0x*1[]2>#<j\tq$z3+&!@4|5%6~78?9\\^`';

const rank = new Uint8Array(256).fill(0);
for (let index = 0; index < COMMON_BYTES.length; index++) rank[COMMON_BYTES.charCodeAt(index)] = 255 - index;
// UTF-8 continuation bytes fill non-English text; lead bytes are one per character.
for (let byte = 0x80; byte < 0xc0; byte++) rank[byte] = 250;
for (let byte = 0xc0; byte < 0x100; byte++) rank[byte] = 180;

const isAsciiLetter = (byte: number) => (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7a;

/**
 * A literal's UTF-8 bytes and how to find them. With `foldAscii` it matches ASCII letters of either
 * case, which is exact for Unicode case folding only when the literal is ASCII without k or s
 * (whose other cases are the Kelvin sign and the long s): see `foldablePart`.
 */
export class ByteLiteral {
  readonly bytes: Uint8Array;
  /** The trigram hashes of `bytes`, for the content's trigram summary. */
  readonly trigrams: Uint32Array;
  private readonly rare: number;
  private readonly rareBytes: readonly number[];

  constructor(
    readonly text: string,
    private readonly foldAscii = false,
  ) {
    this.bytes = utf8.encode(foldAscii ? text.toLowerCase() : text);
    this.trigrams = literalTrigrams(this.bytes);
    let rare = 0;
    for (let index = 1; index < this.bytes.length; index++) {
      if (rank[this.bytes[index]!]! < rank[this.bytes[rare]!]!) rare = index;
    }
    this.rare = rare;
    const byte = this.bytes[rare] ?? 0;
    this.rareBytes = foldAscii && isAsciiLetter(byte) ? [byte | 0x20, byte & ~0x20] : [byte];
  }

  /** The first offset at or after `from` where the literal starts, or -1. */
  indexIn(haystack: Uint8Array, from = 0): number {
    const needle = this.bytes;
    if (needle.length === 0) return from <= haystack.length ? from : -1;
    const last = haystack.length - needle.length;
    const [first, second] = this.rareBytes as [number, number | undefined];
    // The next offset of the rare byte (and of its other case): -1 once there is none, so that a
    // case absent from the file is scanned for once, not at every candidate.
    let nextFirst = -2;
    let nextSecond = second === undefined ? -1 : -2;
    for (let at = from + this.rare; at - this.rare <= last;) {
      if (nextFirst !== -1 && nextFirst < at) nextFirst = haystack.indexOf(first, at);
      if (nextSecond !== -1 && nextSecond < at) nextSecond = haystack.indexOf(second!, at);
      const found = nextSecond === -1 || (nextFirst !== -1 && nextFirst < nextSecond) ? nextFirst : nextSecond;
      if (found === -1) return -1;
      const start = found - this.rare;
      if (start > last) return -1;
      if (this.matchesAt(haystack, start)) return start;
      at = found + 1;
    }
    return -1;
  }

  private matchesAt(haystack: Uint8Array, start: number): boolean {
    const needle = this.bytes;
    if (this.foldAscii) {
      for (let index = 0; index < needle.length; index++) {
        const byte = haystack[start + index]!;
        if ((isAsciiLetter(byte) ? byte | 0x20 : byte) !== needle[index]) return false;
      }
      return true;
    }
    for (let index = 0; index < needle.length; index++) if (haystack[start + index] !== needle[index]) return false;
    return true;
  }
}

/**
 * The longest part of `literal` that ASCII case folding matches exactly as Unicode simple case
 * folding does (see ByteLiteral): ASCII without k or s. Every case-insensitive match of the literal
 * holds an ASCII-folded match of it; undefined when there is no such part.
 */
export function foldablePart(literal: string): string | undefined {
  // Printable ASCII and tabs; other control characters merely end a part.
  const parts = literal.split(/[^\t -~]|[ks]/i);
  const longest = parts.reduce((best, part) => (part.length > best.length ? part : best), '');
  return longest === '' ? undefined : longest;
}

/** What a file must contain for the pattern to match in it: all of `all`, and one of `anyOf` when given. */
export interface BytePrefilter {
  all: readonly ByteLiteral[];
  anyOf: readonly ByteLiteral[] | undefined;
}

/** True when the bytes may hold a match: every required literal is there, and one of the alternatives. */
export function passesPrefilter(bytes: Uint8Array, prefilter: BytePrefilter): boolean {
  // The content's trigram summary, where one is kept, turns most files away without a scan.
  const summary = prefilter.all.length > 0 || prefilter.anyOf !== undefined ? trigramSummary(bytes) : undefined;
  if (summary !== undefined) {
    for (const literal of prefilter.all) if (!mayHoldLiteral(summary, literal.trigrams)) return false;
    if (prefilter.anyOf !== undefined && !prefilter.anyOf.some((literal) => mayHoldLiteral(summary, literal.trigrams)))
      return false;
  }
  for (const literal of prefilter.all) if (literal.indexIn(bytes) === -1) return false;
  if (prefilter.anyOf === undefined) return true;
  return prefilter.anyOf.some((literal) => literal.indexIn(bytes) !== -1);
}

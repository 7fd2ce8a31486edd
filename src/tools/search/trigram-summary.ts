// Which byte trigrams a file's content holds, summarised in a small bitmap kept beside the cached
// bytes: a literal search then passes over most files without reading them again.
//
// Each blob's bytes are immutable and the blob cache hands out the same array for as long as it
// keeps them, so the summary is memoised on that array (a WeakMap): it lives exactly as long as the
// cached bytes, and is never shared between workspaces, whose caches hold their own arrays.

/** Files above this size are scanned each time: their summary would cost more than it saves. */
const MAX_SUMMARISED_BYTES = 1024 * 1024;
/** Bits of summary per byte of content (about 1,500 distinct trigrams in 4 KB of code fill a third). */
const MIN_BITS = 1024;

/** A summary per content array; null once searched without one (the second search builds it). */
const summaries = new WeakMap<Uint8Array, Uint32Array | null>();

const fold = (byte: number) => (byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte);

function trigramHash(a: number, b: number, c: number): number {
  // Multiplicative mixing of the three bytes (ASCII case folded); the bitmap keeps the top bits.
  return Math.imul((fold(a) << 16) | (fold(b) << 8) | fold(c), 0x9e3779b1) >>> 0;
}

/**
 * The summary of `bytes` when a search may use one: built when the same content is searched a
 * second time (a first search scans the bytes anyway, and most content is searched once or
 * often); undefined for files too large or too small to gain from one.
 */
export function trigramSummary(bytes: Uint8Array): Uint32Array | undefined {
  if (bytes.length > MAX_SUMMARISED_BYTES || bytes.length < 3) return undefined;
  const known = summaries.get(bytes);
  if (known) return known;
  if (known === undefined) {
    summaries.set(bytes, null);
    return undefined;
  }
  let bits = MIN_BITS;
  while (bits < bytes.length) bits *= 2;
  const summary = new Uint32Array(bits / 32);
  const shift = 32 - Math.log2(bits);
  for (let at = 2; at < bytes.length; at++) {
    const bit = trigramHash(bytes[at - 2]!, bytes[at - 1]!, bytes[at]!) >>> shift;
    summary[bit >>> 5]! |= 1 << (bit & 31);
  }
  summaries.set(bytes, summary);
  return summary;
}

/** The trigram hashes of a literal's UTF-8 bytes, worked out once for every file a search tests. */
export function literalTrigrams(literal: Uint8Array): Uint32Array {
  const hashes = new Uint32Array(Math.max(0, literal.length - 2));
  for (let at = 2; at < literal.length; at++)
    hashes[at - 2] = trigramHash(literal[at - 2]!, literal[at - 1]!, literal[at]!);
  return hashes;
}

/**
 * False when the content cannot hold the literal whose `literalTrigrams` these are (compared
 * without regard to ASCII case): a trigram of it is missing. True means "maybe": the bytes must
 * still be searched.
 */
export function mayHoldLiteral(summary: Uint32Array, trigrams: Uint32Array): boolean {
  const shift = 32 - Math.log2(summary.length * 32);
  for (let index = 0; index < trigrams.length; index++) {
    const bit = trigrams[index]! >>> shift;
    if ((summary[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

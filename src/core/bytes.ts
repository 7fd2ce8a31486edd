// Byte helpers shared by the homes (pure: no node:* imports).

/** The chunks as one array of `size` bytes (their total); a single chunk is answered as it is, not copied. */
export function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}

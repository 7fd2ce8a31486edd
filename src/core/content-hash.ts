// SHA-256 content addresses for blobs, computed with WebCrypto (present on Node and Workers).

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/**
 * How a home computes content addresses: the SHA-256 of the bytes as 64 lowercase hex digits.
 * WebCrypto's digest (`sha256Hex`) works everywhere but answers a promise through a thread pool,
 * which costs more than hashing a small file; a home with a synchronous hash passes it instead.
 */
export type ContentHasher = (bytes: Uint8Array) => string | Promise<string>;

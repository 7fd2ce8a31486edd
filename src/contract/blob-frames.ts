// The runner protocol's blob batch body: for each blob, its id as 64 hex digits, its length as
// 8 bytes big-endian, then its bytes. Written as a stream of chunks and read as one, so neither
// side copies a batch into one buffer: small frames are grouped into chunks of 64 KiB, large
// blobs go as chunks of their own, and a reader keeps a blob that arrives within one chunk as a
// view of it. Pure TypeScript: the Worker builds the same answer.

import { concatBytes } from '../core/bytes.ts';

const HEADER_BYTES = 72;
/** Frames up to this size are copied into shared chunks; larger blobs are sent as they are. */
const INLINE_BYTES = 16 * 1024;
/** The size of a chunk of grouped frames. */
const GROUP_BYTES = 64 * 1024;

/** The frames of `blobs` (id → bytes, in the order to send), as a stream of chunks. */
export function blobFrameStream(blobs: readonly { hash: string; bytes: Uint8Array }[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    // One group, or one large blob, per pull: chunks are made as the reader takes them.
    pull(controller) {
      if (next === blobs.length) {
        controller.close();
        return;
      }
      const first = blobs[next]!;
      if (first.bytes.byteLength > INLINE_BYTES) {
        next += 1;
        controller.enqueue(frameHeader(first.hash, first.bytes.byteLength));
        controller.enqueue(first.bytes);
        return;
      }
      // Small frames, up to a group's worth (one frame may take it over).
      let end = next;
      let size = 0;
      while (
        end < blobs.length &&
        blobs[end]!.bytes.byteLength <= INLINE_BYTES &&
        (size === 0 || size + HEADER_BYTES + blobs[end]!.bytes.byteLength <= GROUP_BYTES)
      ) {
        size += HEADER_BYTES + blobs[end]!.bytes.byteLength;
        end += 1;
      }
      const group = new Uint8Array(size);
      let offset = 0;
      for (; next < end; next += 1) {
        const { hash, bytes } = blobs[next]!;
        writeHeader(group, offset, hash, bytes.byteLength);
        group.set(bytes, offset + HEADER_BYTES);
        offset += HEADER_BYTES + bytes.byteLength;
      }
      controller.enqueue(group);
    },
  });
}

function frameHeader(hash: string, length: number): Uint8Array {
  const header = new Uint8Array(HEADER_BYTES);
  writeHeader(header, 0, hash, length);
  return header;
}

const ascii = new TextEncoder();
const latin1 = new TextDecoder('latin1');

function writeHeader(target: Uint8Array, offset: number, hash: string, length: number): void {
  ascii.encodeInto(hash, target.subarray(offset, offset + 64));
  // Big-endian, byte by byte: lengths stay below 2^53, so the high word is Math.floor(length / 2^32).
  const high = Math.floor(length / 2 ** 32);
  for (let i = 0; i < 4; i += 1) {
    target[offset + 64 + i] = (high >>> (24 - 8 * i)) & 0xff;
    target[offset + 68 + i] = (length >>> (24 - 8 * i)) & 0xff;
  }
}

/** A header's length field, or undefined when it is 2^53 or more (no such blob exists). */
function readLength(header: Uint8Array): number | undefined {
  const word = (at: number) =>
    ((header[at]! << 24) | (header[at + 1]! << 16) | (header[at + 2]! << 8) | header[at + 3]!) >>> 0;
  const high = word(64);
  return high >= 2 ** 21 ? undefined : high * 2 ** 32 + word(68);
}

/**
 * Reads a batch answer: every blob asked for exactly once and nothing else, or an error naming
 * `what` (a short body is "truncated", a frame not asked for "malformed"). A blob that arrived
 * in one chunk is a view of that chunk; one split across chunks is joined from what arrived,
 * so a length that lies costs no more memory than the bytes actually sent.
 */
export async function readBlobFrames(
  body: ReadableStream<Uint8Array>,
  hashes: readonly string[],
  what: string,
): Promise<Map<string, Uint8Array>> {
  const asked = new Set(hashes);
  const blobs = new Map<string, Uint8Array>();
  // The frame part being read: a header, or the bytes of `hash`; and its pieces so far when split.
  let hash: string | undefined;
  let need = HEADER_BYTES;
  let pieces: Uint8Array[] = [];
  let filled = 0;
  const complete = (part: Uint8Array): void => {
    if (hash !== undefined) {
      blobs.set(hash, part);
      hash = undefined;
      need = HEADER_BYTES;
      return;
    }
    const id = latin1.decode(part.subarray(0, 64));
    if (!asked.has(id) || blobs.has(id))
      throw new Error(
        `${what} answered a malformed blob batch (blob ${JSON.stringify(id)} was not asked for, or came twice)`,
      );
    const length = readLength(part);
    if (length === undefined)
      throw new Error(`${what} answered a malformed blob batch (blob ${id} claims 2^53 bytes or more)`);
    hash = id;
    need = length;
    if (need === 0) complete(new Uint8Array());
  };
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const chunk = read.value;
      for (let at = 0; at < chunk.byteLength;) {
        if (filled === 0 && chunk.byteLength - at >= need) {
          // The whole part is in this chunk: kept as a view of it.
          const part = chunk.subarray(at, at + need);
          at += need;
          complete(part);
          continue;
        }
        const piece = chunk.subarray(at, at + Math.min(need - filled, chunk.byteLength - at));
        pieces.push(piece);
        filled += piece.byteLength;
        at += piece.byteLength;
        if (filled < need) continue;
        const part = concatBytes(pieces, filled);
        pieces = [];
        filled = 0;
        complete(part);
      }
    }
  } catch (error) {
    // What is left of a refused answer is not read: cancelling frees its connection at once.
    await reader.cancel(error).catch(() => undefined);
    throw error;
  } finally {
    reader.releaseLock();
  }
  if (hash !== undefined || filled > 0)
    throw new Error(
      `${what} answered a truncated blob batch (${hash === undefined ? 'a frame header' : `blob ${hash}`} is cut short)`,
    );
  if (blobs.size !== asked.size)
    throw new Error(
      `${what} answered a truncated blob batch (${asked.size - blobs.size} of ${asked.size} blobs missing)`,
    );
  return blobs;
}

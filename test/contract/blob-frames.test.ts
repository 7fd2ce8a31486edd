// The blob batch body: what blobFrameStream writes, readBlobFrames reads back however the bytes are split.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blobFrameStream, readBlobFrames } from '../../src/contract/blob-frames.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const blob = (size: number, seed: number) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251);

/** Blobs of every kind a batch carries: empty, tiny, many small ones grouped, and large ones sent alone. */
const blobs = [
  blob(0, 1),
  blob(1, 2),
  ...Array.from({ length: 200 }, (_, i) => blob(700 + i, i)),
  blob(16 * 1024, 3),
  blob(16 * 1024 + 1, 4),
  blob(300_000, 5),
  blob(5, 6),
].map((bytes) => ({
  hash: sha256(bytes),
  bytes,
}));
const hashes = blobs.map((entry) => entry.hash);

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<{ chunks: Uint8Array[]; body: Uint8Array }> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return { chunks, body: Buffer.concat(chunks) };
}

/** The body as a stream of chunks cut where `cut` says. */
function split(body: Uint8Array, cut: (offset: number) => number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= body.byteLength) return controller.close();
      const end = Math.min(body.byteLength, offset + Math.max(1, cut(offset)));
      // A copy: the reader must not depend on chunks sharing one buffer.
      controller.enqueue(body.slice(offset, end));
      offset = end;
    },
  });
}

function expectAll(read: Map<string, Uint8Array>): void {
  expect(read.size).toBe(blobs.length);
  for (const { hash, bytes } of blobs) expect(Buffer.from(read.get(hash)!).equals(Buffer.from(bytes))).toBe(true);
}

describe('blob frames', () => {
  it('writes id, 8-byte big-endian length and bytes per blob, grouping small frames and sending large blobs alone', async () => {
    const { chunks, body } = await bytesOf(blobFrameStream(blobs));
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    let offset = 0;
    for (const { hash, bytes } of blobs) {
      expect(Buffer.from(body.subarray(offset, offset + 64)).toString('latin1')).toBe(hash);
      expect(view.getBigUint64(offset + 64)).toBe(BigInt(bytes.byteLength));
      expect(Buffer.from(body.subarray(offset + 72, offset + 72 + bytes.byteLength)).equals(Buffer.from(bytes))).toBe(
        true,
      );
      offset += 72 + bytes.byteLength;
    }
    expect(offset).toBe(body.byteLength);
    // 200 small blobs of about 800 bytes take a few chunks, not hundreds; the 300,000-byte blob is a chunk of its own.
    expect(chunks.length).toBeLessThan(12);
    expect(chunks.some((chunk) => chunk === blobs.at(-2)!.bytes)).toBe(true);
  });

  it('reads back every blob whatever the chunks: whole, one byte at a time, and cut at random', async () => {
    expectAll(await readBlobFrames(blobFrameStream(blobs), hashes, 'test'));
    const { body } = await bytesOf(blobFrameStream(blobs));
    expectAll(
      await readBlobFrames(
        split(body, () => 1),
        hashes,
        'test',
      ),
    );
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 5000;
    for (let run = 0; run < 5; run += 1) expectAll(await readBlobFrames(split(body, random), hashes, 'test'));
  });

  it('refuses a body cut short anywhere, a blob not asked for or sent twice, and trailing bytes', async () => {
    const { body } = await bytesOf(blobFrameStream(blobs.slice(0, 3)));
    const asked = hashes.slice(0, 3);
    for (const end of [0, 10, 72, 73, 72 + 1 + 71, body.byteLength - 1]) {
      await expect(
        readBlobFrames(
          split(body.subarray(0, end), () => 100),
          asked,
          'test',
        ),
        `cut at ${end}`,
      ).rejects.toThrow(/truncated/);
    }
    await expect(
      readBlobFrames(
        split(body, () => 100),
        asked.slice(0, 2),
        'test',
      ),
    ).rejects.toThrow(/malformed.*not asked for/);
    const twice = Buffer.concat([body.subarray(0, 72), body]);
    await expect(
      readBlobFrames(
        split(twice, () => 100),
        asked,
        'test',
      ),
    ).rejects.toThrow(/malformed.*came twice/);
    await expect(
      readBlobFrames(
        split(Buffer.concat([body, Buffer.from('x')]), () => 100),
        asked,
        'test',
      ),
    ).rejects.toThrow(/truncated/);
  });

  it('refuses a length that lies without holding more than the bytes that came', async () => {
    const header = Buffer.alloc(72);
    header.write(hashes[3]!, 0, 'latin1');
    header.writeBigUInt64BE(2n ** 40n, 64);
    const body = Buffer.concat([header, Buffer.alloc(1000)]);
    await expect(
      readBlobFrames(
        split(body, () => 100),
        [hashes[3]!],
        'test',
      ),
    ).rejects.toThrow(/truncated/);
    header.writeBigUInt64BE(2n ** 63n, 64);
    await expect(
      readBlobFrames(
        split(header, () => 100),
        [hashes[3]!],
        'test',
      ),
    ).rejects.toThrow(/malformed.*2\^53/);
  });
});

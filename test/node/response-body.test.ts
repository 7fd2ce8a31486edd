// The Node home's chunked answer: sent straight to the socket, each chunk zeroed and given to the
// body again once the socket has written it, the body pulled only as fast as the client reads; a
// client gone stops the body, and a body failing midway ends the connection and is told.
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BodyPieces, PieceSink } from '../../src/core/body-pieces.ts';
import { sendNodeBody } from '../../src/node/response-body.ts';

const CHUNK = 64 * 1024;
const CHUNKS = 200;

/** What the body of the route below saw: chunks given to it, and whether each was all zeros. */
interface Seen {
  handed: Uint8Array[];
  dirty: number;
  pulls: number;
  stopped: boolean;
  errors: unknown[];
}

let server: ServerType;
let port = 0;
let seen: Seen;
/** The bytes each chunk of the body is filled with, in order: the client must read exactly these. */
const pattern = randomBytes(CHUNK * CHUNKS);

/**
 * A body of CHUNKS chunks, each filled from `pattern` into a chunk of `newChunk`, which it checks
 * is all zeros first; `failAt` throws at that pull instead.
 */
function patternBody(newChunk: () => Uint8Array, failAt?: number): BodyPieces {
  let next = 0;
  return {
    byteLength: CHUNK * CHUNKS,
    async pull(sink: PieceSink) {
      seen.pulls += 1;
      if (next === failAt) throw new Error('the content could not be read');
      // A turn of the event loop, as reading a content from disk takes.
      await new Promise((resolve) => setImmediate(resolve));
      const chunk = newChunk();
      seen.handed.push(chunk);
      if (chunk.some((byte) => byte !== 0)) seen.dirty += 1;
      chunk.set(pattern.subarray(next * CHUNK, (next + 1) * CHUNK));
      sink(chunk, chunk);
      next += 1;
      return next < CHUNKS;
    },
    stop() {
      seen.stopped = true;
    },
  };
}

beforeAll(async () => {
  const app = new Hono();
  app.get('/pattern', (c) => {
    const failAt = c.req.query('failAt');
    const answer = sendNodeBody(
      c.env,
      {
        status: 200,
        headers: { 'content-type': 'application/octet-stream' },
        body: {
          chunkBytes: CHUNK,
          make: (newChunk) => patternBody(newChunk, failAt === undefined ? undefined : Number(failAt)),
        },
      },
      (error) => seen.errors.push(error),
    );
    return answer ?? c.text('no node response', 500);
  });
  app.get('/ok', (c) => c.text('ok'));
  server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fresh = (): Seen => ({ handed: [], dirty: 0, pulls: 0, stopped: false, errors: [] });

describe('sendNodeBody', () => {
  it('sends every byte in order with its length, reusing each chunk once written, zeroed', async () => {
    seen = fresh();
    const response = await fetch(`http://127.0.0.1:${port}/pattern`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-length')).toBe(String(CHUNK * CHUNKS));
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(bytes.byteLength).toBe(pattern.byteLength);
    expect(Buffer.compare(bytes, pattern)).toBe(0);
    // Chunks were given again (far fewer made than sent), and each was zeros when given.
    expect(new Set(seen.handed).size).toBeLessThan(CHUNKS / 4);
    expect(seen.dirty).toBe(0);
    expect(seen.errors).toEqual([]);
  });

  it('pulls only as fast as the client reads, and stops the body when the client goes', async () => {
    seen = fresh();
    const request = get(`http://127.0.0.1:${port}/pattern`);
    const response = await new Promise<import('node:http').IncomingMessage>((resolve) =>
      request.on('response', resolve),
    );
    response.pause();
    // Not read: the socket's buffers fill and the sender waits, well short of the body.
    let before = -1;
    while (seen.pulls !== before) {
      before = seen.pulls;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen.pulls).toBeLessThan(CHUNKS);
    const closed = new Promise((resolve) => request.on('close', resolve));
    request.on('error', () => undefined);
    request.destroy();
    await closed;
    await expect.poll(() => seen.stopped).toBe(true);
    expect(seen.pulls).toBeLessThan(CHUNKS);
    expect(seen.errors).toEqual([]);
    expect(await (await fetch(`http://127.0.0.1:${port}/ok`)).text()).toBe('ok');
  });

  it('ends the connection when the body fails midway, tells it, and serves on', async () => {
    seen = fresh();
    const response = await fetch(`http://127.0.0.1:${port}/pattern?failAt=20`);
    expect(response.status).toBe(200);
    await expect(response.arrayBuffer()).rejects.toThrow();
    expect(seen.errors).toHaveLength(1);
    expect((seen.errors[0] as Error).message).toBe('the content could not be read');
    expect(await (await fetch(`http://127.0.0.1:${port}/ok`)).text()).toBe('ok');
  });
});

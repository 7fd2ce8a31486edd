// The Node home's body read: a body of a declared length read from the socket into one array, whole
// and exactly as sent, one body after another, readable before it has all arrived; a body cut
// short fails the waits for what did not come.
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNodeBody } from '../../src/node/request-body.ts';

let server: ServerType;
let port = 0;
/** Tells the client of the test below that the route has read the bytes it waited for. */
let sentRest: () => void = () => undefined;
/** What the route saw of each body: its length and SHA-256, or why it could not read it. */
const seen: { length?: number; sha256?: string; error?: string }[] = [];

beforeAll(async () => {
  const app = new Hono();
  // Answers once the first `first` bytes are there, while the client still holds back the rest.
  app.put('/first/:first', async (c) => {
    const body = readNodeBody(c.env, Number(c.req.header('content-length')))!;
    const first = Number(c.req.param('first'));
    await body.until(first);
    const early = { available: body.available, sha256: sha256(body.bytes.subarray(0, first)) };
    sentRest();
    await body.until(body.bytes.byteLength);
    return c.json({ ...early, whole: sha256(body.bytes) });
  });
  app.put('/body', async (c) => {
    const body = readNodeBody(c.env, Number(c.req.header('content-length')));
    if (body === undefined) return c.text('no node request', 500);
    try {
      await body.until(body.bytes.byteLength);
      const bytes = body.bytes;
      seen.push({ length: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') });
      return c.text('ok');
    } catch (error) {
      seen.push({ error: (error as Error).message });
      return c.text('cut short', 400);
    }
  });
  server = await new Promise<ServerType>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function put(body: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request(
      { port, host: '127.0.0.1', path: '/body', method: 'PUT', headers: { 'content-length': body.byteLength } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('readNodeBody', () => {
  it('reads each body whole and as sent, one after another of other sizes', async () => {
    const bodies = [randomBytes(3 * 1024 * 1024 + 17), randomBytes(1024 * 1024 - 3), new Uint8Array(0), randomBytes(5)];
    seen.length = 0;
    for (const body of bodies) expect(await put(body)).toBe(200);
    expect(seen).toEqual(bodies.map((body) => ({ length: body.byteLength, sha256: sha256(body) })));
  });

  it('rejects a body whose connection closes before its declared length, and reads the next whole', async () => {
    seen.length = 0;
    await new Promise<void>((resolve) => {
      const sent = request({
        port,
        host: '127.0.0.1',
        path: '/body',
        method: 'PUT',
        headers: { 'content-length': 1024 * 1024 },
      });
      sent.on('error', () => resolve());
      sent.write(randomBytes(1000), () => setTimeout(() => sent.destroy(), 50));
      sent.on('close', () => resolve());
    });
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]!.error).toEqual(expect.any(String));
    const body = randomBytes(2 * 1024 * 1024);
    expect(await put(body)).toBe(200);
    expect(seen[1]).toEqual({ length: body.byteLength, sha256: sha256(body) });
  });

  it('lets the route read the bytes that have arrived while the rest are still to come', async () => {
    const head = randomBytes(300 * 1024);
    const rest = randomBytes(700 * 1024);
    const answer = await new Promise<{ available: number; sha256: string; whole: string }>((resolve, reject) => {
      const sent = request(
        {
          port,
          host: '127.0.0.1',
          path: `/first/${head.byteLength}`,
          method: 'PUT',
          headers: { 'content-length': head.byteLength + rest.byteLength },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(JSON.parse(text) as { available: number; sha256: string; whole: string }));
        },
      );
      sent.on('error', reject);
      // The rest is sent only once the route has read the head: a read that waited for the whole body never would be.
      sentRest = () => sent.end(rest);
      sent.write(head);
    });
    expect(answer.available).toBeGreaterThanOrEqual(head.byteLength);
    expect(answer.available).toBeLessThan(head.byteLength + rest.byteLength);
    expect(answer.sha256).toBe(sha256(head));
    expect(answer.whole).toBe(sha256(Buffer.concat([head, rest])));
  });

  it('leaves a request it cannot read directly to the caller', () => {
    expect(readNodeBody(undefined, 10)).toBeUndefined();
    expect(readNodeBody({}, 10)).toBeUndefined();
  });
});

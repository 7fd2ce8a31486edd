// The runner protocol's blob batch over real HTTP: binary frames, the request limits, and a client that refuses a bad answer.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RunnerClient } from '../../src/runner/runner-client.ts';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, useServer } from '../support/server-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

// A runner reads a workspace only while it holds a lease on one of its jobs: the lease of the
// job that commits the files is held (not ended) for the whole file, so it must not expire.
const server = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_LEASE_MS: '3600000' } });
let runnerKey = '';
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Every byte value, an empty file, text, and something larger than one read: what a batch must carry unchanged. */
const contents: Record<string, Uint8Array> = {
  'bytes.bin': Uint8Array.from({ length: 256 }, (_, i) => i),
  'empty.txt': new Uint8Array(),
  'text.txt': new TextEncoder().encode('héllo\r\n\0'),
  'big.bin': Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251),
};
const hashes = Object.values(contents).map(sha256);

beforeAll(async () => {
  runnerKey = (await createRunnerKey(server)).secret;
  await server.call('PUT', '/v1/workspaces/bl');
  // Files go in as a runner commits them (binary included): lease a job, sync its writes, report its exit.
  await server.call('POST', '/v1/workspaces/bl/tools/bash', { action: 'start', command: 'true' });
  const { processId, token } = (
    await callApi(server.url, runnerKey, 'POST', '/v1/runner/lease', { runnerId: 'by-hand', waitMs: JOB_WAIT_MS })
  ).body.job;
  const changes = Object.entries(contents).map(([path, bytes]) => ({
    op: 'write',
    path,
    contentBase64: Buffer.from(bytes).toString('base64'),
    baseVersion: null,
  }));
  const synced = await callApi(server.url, runnerKey, 'POST', `/v1/runner/workspaces/bl/processes/${processId}/sync`, {
    token,
    changes,
  });
  expect(synced.body.committed.sort()).toEqual(Object.keys(contents).sort());
});

/** The batch answer's bytes as the server sends them. */
async function rawBatch(ids: string[]): Promise<{ status: number; type: string | null; body: Uint8Array }> {
  const response = await fetch(`${server.url}/v1/runner/workspaces/bl/blobs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runnerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ hashes: ids }),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

describe('the blob batch route', () => {
  it('answers each distinct blob asked for once, in order, as id, 8-byte big-endian length and bytes', async () => {
    const asked = [hashes[2]!, hashes[0]!, hashes[2]!, hashes[1]!, hashes[3]!];
    const { status, type, body } = await rawBatch(asked);
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/octet-stream/);
    const frames: { id: string; bytes: Uint8Array }[] = [];
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    for (let offset = 0; offset < body.byteLength;) {
      const id = new TextDecoder().decode(body.subarray(offset, offset + 64));
      const length = Number(view.getBigUint64(offset + 64));
      frames.push({ id, bytes: body.subarray(offset + 72, offset + 72 + length) });
      offset += 72 + length;
    }
    expect(frames.map((frame) => frame.id)).toEqual([hashes[2], hashes[0], hashes[1], hashes[3]]);
    for (const frame of frames) expect(sha256(frame.bytes)).toBe(frame.id);
  });

  it('reads back byte for byte through RunnerClient, binary and empty blobs included', async () => {
    const blobs = await new RunnerClient(server.url, runnerKey).blobs('bl', [...hashes, hashes[0]!]);
    expect([...blobs.keys()].sort()).toEqual([...hashes].sort());
    for (const bytes of Object.values(contents))
      expect(Buffer.from(blobs.get(sha256(bytes))!).equals(Buffer.from(bytes))).toBe(true);
  });

  it('refuses more than 1,000 ids, none, or one that is not a blob id, as invalid_argument', async () => {
    for (const ids of [
      Array.from({ length: 1001 }, () => hashes[0]!),
      [],
      ['../../etc/passwd'],
      [hashes[0]!.toUpperCase()],
    ]) {
      const answer = await callApi(server.url, runnerKey, 'POST', '/v1/runner/workspaces/bl/blobs', { hashes: ids });
      expect({ status: answer.status, code: answer.body.error?.code }).toEqual({
        status: 400,
        code: 'invalid_argument',
      });
      expect(answer.body.error.message).toMatch(/hashes/);
    }
    const atLimit = await callApi(server.url, runnerKey, 'POST', '/v1/runner/workspaces/bl/blobs', {
      hashes: Array.from({ length: 1000 }, () => hashes[1]!),
    });
    expect(atLimit.status).toBe(200);
  });

  it('answers an error status, not a short answer, when a blob asked for is missing', async () => {
    const answer = await callApi(server.url, runnerKey, 'POST', '/v1/runner/workspaces/bl/blobs', {
      hashes: [hashes[0]!, 'f'.repeat(64)],
    });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.body.error?.code).toBeDefined();
  });
});

describe('RunnerClient.blobs', () => {
  const peers: Server[] = [];
  afterEach(async () => {
    for (const peer of peers.splice(0)) await new Promise((resolve) => peer.close(resolve));
  });

  /** A server that answers the blob batch route with exactly `body`. */
  async function peerAnswering(body: Uint8Array, type = 'application/octet-stream'): Promise<RunnerClient> {
    const peer = createServer((request, response) => {
      request.resume();
      request.on('end', () =>
        response.writeHead(200, { 'content-type': type, 'content-length': body.byteLength }).end(body),
      );
    });
    peers.push(peer);
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    return new RunnerClient(`http://127.0.0.1:${(peer.address() as AddressInfo).port}`, 'key', 0);
  }

  it('refuses an answer cut short, lacking a blob, carrying one not asked for, or not binary', async () => {
    const asked = [hashes[0]!, hashes[2]!, hashes[3]!];
    const { body } = await rawBatch(asked);
    // The whole answer, from the same peer, is read: what follows is the framing alone failing.
    expect((await (await peerAnswering(body)).blobs('bl', asked)).size).toBe(3);
    const lastFrame = 72 + contents['big.bin']!.byteLength;
    const cases: [string, Uint8Array, string, string[]][] = [
      ['cut inside a blob', body.subarray(0, body.byteLength - 10), 'truncated', asked],
      ['cut inside a frame header', body.subarray(0, body.byteLength - lastFrame + 40), 'truncated', asked],
      ['cut between frames', body.subarray(0, body.byteLength - lastFrame), 'truncated', asked],
      ['a blob not asked for', body, 'malformed', [hashes[0]!, hashes[2]!]],
      ['trailing bytes', Buffer.concat([body, Buffer.from('x')]), 'truncated', asked],
    ];
    for (const [what, answer, error, ids] of cases) {
      await expect((await peerAnswering(answer)).blobs('bl', ids), what).rejects.toThrow(error);
    }
    const json = new TextEncoder().encode(JSON.stringify({ blobs: { [hashes[0]!]: 'AA==' } }));
    await expect((await peerAnswering(json, 'application/json')).blobs('bl', [hashes[0]!])).rejects.toThrow(
      /not a binary blob batch/,
    );
  });
});

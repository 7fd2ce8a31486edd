// The runner protocol's output report over real HTTP: the text/plain form (numbers in the query) and the JSON form.
import { beforeAll, describe, expect, it } from 'vitest';
import { RunnerClient, StaleLeaseError } from '../../src/runner/runner-client.ts';
import { createRunnerKey } from '../support/keys.ts';
import { callApi, useServer } from '../support/server-process.ts';
import { JOB_WAIT_MS } from '../support/runner-sync.ts';

const RING = 1024;
// Each test leases processes of one workspace and leaves them running: no cap on them here.
const server = useServer({
  env: {
    TOOLGATE_RUNNER: 'off',
    TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: String(RING),
    TOOLGATE_MAX_BODY_BYTES: '65536',
    TOOLGATE_WORKSPACE_MAX_PROCESSES: '100',
  },
});

let runnerKey = '';
beforeAll(async () => {
  await server.call('PUT', '/v1/workspaces/out');
  runnerKey = (await createRunnerKey(server)).secret;
});

/** Starts a process and plays its runner: leases the job and reports it started. */
async function leasedProcess(): Promise<{ processId: string; token: number }> {
  const started = await server.call('POST', '/v1/workspaces/out/tools/bash', { action: 'start', command: 'true' });
  const lease = await callApi(server.url, runnerKey, 'POST', '/v1/runner/lease', {
    runnerId: 'by-hand',
    waitMs: JOB_WAIT_MS,
  });
  const { processId, token } = lease.body.job;
  expect(processId).toBe(started.body.result.processId);
  expect(
    (
      await callApi(server.url, runnerKey, 'POST', `/v1/runner/workspaces/out/processes/${processId}/started`, {
        token,
        pid: 1,
      })
    ).status,
  ).toBe(200);
  return { processId, token };
}

/** Posts an output body as it is, with `query` after the `?`. */
async function postOutput(
  processId: string,
  query: string,
  body: string | Uint8Array | ReadableStream<Uint8Array>,
  contentType = 'text/plain; charset=utf-8',
) {
  const init: RequestInit & { duplex?: 'half' } = {
    method: 'POST',
    headers: { authorization: `Bearer ${runnerKey}`, 'content-type': contentType },
    body: body as RequestInit['body'],
  };
  if (body instanceof ReadableStream) init.duplex = 'half';
  const response = await fetch(`${server.url}/v1/runner/workspaces/out/processes/${processId}/output?${query}`, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function logs(processId: string, offset?: number, limit = 100_000): Promise<any> {
  const answer = await server.call('POST', '/v1/workspaces/out/tools/bash', {
    action: 'logs',
    processId,
    ...(offset === undefined ? {} : { offset }),
    limit,
  });
  return answer.body.result;
}

describe('output as a text body', () => {
  it('stores what RunnerClient sends byte for byte, counting UTF-16 units, alongside the JSON form', async () => {
    const { processId, token } = await leasedProcess();
    const client = new RunnerClient(server.url, runnerKey);
    const batches = ['héllo 😀\n', 'a\uD800b', '𝄞\r\n\0end'];
    let offset = 0;
    for (const batch of batches) {
      await client.output({ workspace: 'out', processId }, token, batch, offset);
      offset += batch.length;
    }
    const json = await callApi(
      server.url,
      runnerKey,
      'POST',
      `/v1/runner/workspaces/out/processes/${processId}/output`,
      { token, data: ' json', offset },
    );
    expect(json.body).toEqual({ end: offset + 5 });
    // A lone surrogate does not survive storage: it becomes one U+FFFD, so every offset stays true.
    const full = `héllo 😀\na\uFFFDb𝄞\r\n\0end json`;
    expect(await logs(processId, 0)).toMatchObject({
      data: full,
      offset: 0,
      nextOffset: full.length,
      startOffset: 0,
      truncated: false,
    });
    expect((await logs(processId, 6, 2)).data).toBe('😀');
  });

  it('applies a resent batch once and answers a gap with a conflict naming the offset to resend from', async () => {
    const { processId, token } = await leasedProcess();
    expect(await postOutput(processId, `token=${token}&offset=0`, 'hello ')).toEqual({ status: 200, body: { end: 6 } });
    expect(await postOutput(processId, `token=${token}&offset=0`, 'hello ')).toEqual({ status: 200, body: { end: 6 } });
    expect(await postOutput(processId, `token=${token}&offset=3`, 'lo world')).toEqual({
      status: 200,
      body: { end: 11 },
    });
    const gap = await postOutput(processId, `token=${token}&offset=20`, '!');
    expect({ status: gap.status, code: gap.body.error.code, end: gap.body.error.details.end }).toEqual({
      status: 409,
      code: 'conflict',
      end: 11,
    });
    // Without an offset the text goes at the end.
    expect(await postOutput(processId, `token=${token}`, '!')).toEqual({ status: 200, body: { end: 12 } });
    expect((await logs(processId)).data).toBe('hello world!');
  });

  it('counts skipped characters in every offset and keeps the tail it was sent', async () => {
    const { processId, token } = await leasedProcess();
    const client = new RunnerClient(server.url, runnerKey);
    await client.output({ workspace: 'out', processId }, token, 'head', 0);
    const tail = Array.from({ length: RING }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    await client.output({ workspace: 'out', processId }, token, tail, 4, 5000);
    // A resent batch after a skip is applied once.
    await client.output({ workspace: 'out', processId }, token, tail, 4, 5000);
    await client.output({ workspace: 'out', processId }, token, '.', 5004 + RING);
    const page = await logs(processId, 0);
    expect(page).toMatchObject({
      offset: 5004,
      startOffset: 5004,
      nextOffset: 5005 + RING,
      truncated: true,
      data: `${tail}.`,
    });
    const short = await postOutput(processId, `token=${token}&offset=${5005 + RING}&skipped=10`, 'too short');
    expect({ status: short.status, code: short.body.error.code }).toEqual({ status: 400, code: 'invalid_argument' });
  });

  it('refuses a stale token with 409, which RunnerClient reports as a stale lease', async () => {
    const { processId, token } = await leasedProcess();
    const stale = await postOutput(processId, `token=${token + 1}&offset=0`, 'late');
    expect({ status: stale.status, code: stale.body.error.code }).toEqual({ status: 409, code: 'conflict' });
    await expect(
      new RunnerClient(server.url, runnerKey).output({ workspace: 'out', processId }, token + 1, 'late', 0),
    ).rejects.toBeInstanceOf(StaleLeaseError);
    expect((await logs(processId)).nextOffset).toBe(0);
  });

  it('refuses bytes that are not UTF-8, malformed numbers and unknown query fields', async () => {
    const { processId, token } = await leasedProcess();
    for (const [query, body] of [
      [`token=${token}&offset=0`, new Uint8Array([0x61, 0xff, 0x62])],
      [`token=${token}&offset=-1`, 'x'],
      [`token=${token}&offset=1.5`, 'x'],
      [`offset=0`, 'x'],
      [`token=${token}&offset=0&extra=1`, 'x'],
    ] as const) {
      const answer = await postOutput(processId, query, body);
      expect({ query, status: answer.status, code: answer.body.error.code }).toEqual({
        query,
        status: 400,
        code: 'invalid_argument',
      });
    }
    // Another charset is not taken for text: the body must then be JSON.
    const latin1 = await postOutput(processId, `token=${token}&offset=0`, 'x', 'text/plain; charset=iso-8859-1');
    expect({ status: latin1.status, code: latin1.body.error.code }).toEqual({ status: 400, code: 'invalid_argument' });
    expect((await logs(processId)).nextOffset).toBe(0);
  });

  it('counts the body against the limit, with a Content-Length or streamed without one', async () => {
    const { processId, token } = await leasedProcess();
    const tooBig = await postOutput(processId, `token=${token}&offset=0`, 'x'.repeat(65_537));
    expect({ status: tooBig.status, code: tooBig.body.error.code }).toEqual({ status: 413, code: 'payload_too_large' });
    const stream = (size: number, piece = 16_384) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let sent = 0; sent < size; sent += piece)
            controller.enqueue(new TextEncoder().encode('y'.repeat(Math.min(piece, size - sent))));
          controller.close();
        },
      });
    const streamedTooBig = await postOutput(processId, `token=${token}&offset=0`, stream(70_000));
    expect({ status: streamedTooBig.status, code: streamedTooBig.body.error.code }).toEqual({
      status: 413,
      code: 'payload_too_large',
    });
    expect(await postOutput(processId, `token=${token}&offset=0`, stream(40_000))).toEqual({
      status: 200,
      body: { end: 40_000 },
    });
    const page = await logs(processId, 0);
    expect(page).toMatchObject({ nextOffset: 40_000, truncated: true });
    expect(page.data).toBe('y'.repeat(page.data.length));
  });
});

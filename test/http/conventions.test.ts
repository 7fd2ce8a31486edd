// docs/api.md Conventions over real HTTP: auth, error bodies, bad input, body limits; the server keeps serving.
import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { callApi, useServer } from '../support/server-process.ts';

const LIMIT = 64 * 1024;

const server = useServer({ env: { TOOLGATE_MAX_BODY_BYTES: String(LIMIT) } });

beforeAll(async () => {
  expect((await server.call('PUT', '/v1/workspaces/conv')).status).toBe(201);
});

function expectError(answer: { status: number; body: any }, status: number, code: string): void {
  expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status, code });
  expect(typeof answer.body.error.message).toBe('string');
  expect(answer.body.error.message.length).toBeGreaterThan(10);
  expect(JSON.stringify(answer.body)).not.toMatch(/\n\s+at |\.ts:\d+/);
}

async function stillServing(): Promise<void> {
  const answer = await server.call('POST', '/v1/workspaces/conv/tools/write_file', {
    path: 'alive.txt',
    content: 'yes',
  });
  expect(answer.status).toBe(200);
}

/** Sends a raw body (optionally chunked, without Content-Length) and returns status and body. */
function rawPost(
  path: string,
  chunks: Buffer[],
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url + path);
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    // The server may answer 413 and close while we still send: the write then fails (EPIPE or
    // ECONNRESET), but its answer has arrived or is about to; only its absence is a failure.
    req.on('error', (error) => setTimeout(() => reject(error), 1000));
    const writeNext = (index: number): void => {
      if (index >= chunks.length || req.destroyed) {
        req.end();
        return;
      }
      // Stop sending once the server answered: it does not read the rest.
      if (!req.write(chunks[index])) req.once('drain', () => writeNext(index + 1));
      else setImmediate(() => writeNext(index + 1));
    };
    writeNext(0);
  });
}

describe('health and auth', () => {
  it('answers /healthz without a key', async () => {
    const answer = await callApi(server.url, undefined, 'GET', '/healthz');
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('refuses /v1 without a key, with an unknown key and with a malformed header', async () => {
    expectError(await callApi(server.url, undefined, 'GET', '/v1/workspaces/conv'), 401, 'unauthorized');
    expectError(await callApi(server.url, 'tg_not_a_key', 'GET', '/v1/workspaces/conv'), 401, 'unauthorized');
    expectError(
      await callApi(server.url, undefined, 'GET', '/v1/workspaces/conv', undefined, {
        authorization: `Basic ${server.key}`,
      }),
      401,
      'unauthorized',
    );
    expectError(
      await callApi(server.url, undefined, 'POST', '/v1/workspaces/conv/tools/read_file', { path: 'x' }),
      401,
      'unauthorized',
    );
  });

  it('answers an unknown route with the error body', async () => {
    expectError(await server.call('GET', '/v1/nothing-here'), 404, 'not_found');
  });
});

describe('bad input gets invalid_argument and changes nothing', () => {
  it('malformed JSON', async () => {
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/write_file', '{"path": "a.txt", "content": '),
      400,
      'invalid_argument',
    );
  });

  it('a body that is not application/json', async () => {
    const answer = await server.call(
      'POST',
      '/v1/workspaces/conv/tools/write_file',
      JSON.stringify({ path: 'a.txt', content: 'x' }),
      {
        'content-type': 'text/plain',
      },
    );
    expectError(answer, 400, 'invalid_argument');
  });

  it('an empty body, a JSON array, null and a string', async () => {
    for (const body of ['', '[]', 'null', '"text"']) {
      expectError(await server.call('POST', '/v1/workspaces/conv/tools/read_file', body), 400, 'invalid_argument');
    }
  });

  it('wrong types name the field', async () => {
    const answer = await server.call('POST', '/v1/workspaces/conv/tools/write_file', { path: 42, content: 'x' });
    expectError(answer, 400, 'invalid_argument');
    expect(answer.body.error.message).toContain('path');
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/read_file', { path: 'a', startLine: 1.5 }),
      400,
      'invalid_argument',
    );
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/read_file', { path: 'a', maxChars: 0 }),
      400,
      'invalid_argument',
    );
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/write_file', { path: 'a', content: 'x', mode: 'replace' }),
      400,
      'invalid_argument',
    );
  });

  it('unknown fields are rejected, naming the field', async () => {
    const answer = await server.call('POST', '/v1/workspaces/conv/tools/write_file', {
      path: 'typo.txt',
      content: 'x',
      mdoe: 'append',
    });
    expectError(answer, 400, 'invalid_argument');
    expect(answer.body.error.message).toContain('mdoe');
    expectError(await server.call('PUT', '/v1/workspaces/conv', { excluded: ['x'] }), 400, 'invalid_argument');
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/read_file', { path: 'typo.txt' }),
      404,
      'not_found',
    );
  });

  it('an unknown tool is not_found', async () => {
    expectError(await server.call('POST', '/v1/workspaces/conv/tools/delete_everything', {}), 404, 'not_found');
  });

  it('the server keeps serving afterwards', stillServing);
});

describe('body limit on the bytes received', () => {
  it('an oversized body with Content-Length is 413 and nothing is written', async () => {
    const content = 'x'.repeat(LIMIT);
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/write_file', { path: 'big.txt', content }),
      413,
      'payload_too_large',
    );
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/read_file', { path: 'big.txt' }),
      404,
      'not_found',
    );
  });

  it('an oversized chunked body without Content-Length is 413 and nothing is written', async () => {
    const head = Buffer.from('{"path": "chunked.txt", "content": "');
    const chunk = Buffer.alloc(8 * 1024, 'y');
    const chunks = [head, ...Array.from({ length: 64 }, () => chunk), Buffer.from('"}')];
    const answer = await rawPost('/v1/workspaces/conv/tools/write_file', chunks, {
      authorization: `Bearer ${server.key}`,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expectError(answer, 413, 'payload_too_large');
    expectError(
      await server.call('POST', '/v1/workspaces/conv/tools/read_file', { path: 'chunked.txt' }),
      404,
      'not_found',
    );
  });

  it('a chunked body under the limit is accepted', async () => {
    const body = JSON.stringify({ path: 'small-chunked.txt', content: 'z'.repeat(1000) });
    const chunks = [Buffer.from(body.slice(0, 500)), Buffer.from(body.slice(500))];
    const answer = await rawPost('/v1/workspaces/conv/tools/write_file', chunks, {
      authorization: `Bearer ${server.key}`,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(answer.status).toBe(200);
    expect(answer.body.result.bytesWritten).toBe(1000);
  });

  it('the server keeps serving afterwards', stillServing);
});

describe('GET /v1/tools', () => {
  it('lists read_file and write_file in every format, with strict input schemas', async () => {
    const formats = {
      jsonschema: (tool: any) => ({ name: tool.name, schema: tool.inputSchema }),
      openai: (tool: any) => ({ name: tool.function.name, schema: tool.function.parameters, type: tool.type }),
      anthropic: (tool: any) => ({ name: tool.name, schema: tool.input_schema }),
      mcp: (tool: any) => ({ name: tool.name, schema: tool.inputSchema, annotations: tool.annotations }),
    };
    for (const [format, pick] of Object.entries(formats)) {
      const answer = await server.call('GET', `/v1/tools?format=${format}`);
      expect(answer.status).toBe(200);
      const tools = answer.body.tools.map(pick);
      expect(tools.map((tool: any) => tool.name)).toEqual(expect.arrayContaining(['read_file', 'write_file']));
      const write = tools.find((tool: any) => tool.name === 'write_file');
      expect(write.schema).toMatchObject({
        type: 'object',
        additionalProperties: false,
        required: ['path', 'content'],
      });
      expect(write.schema.properties.mode.enum).toEqual(['create', 'overwrite', 'append']);
      if (format === 'openai') expect(write.type).toBe('function');
      if (format === 'mcp')
        expect(tools.find((tool: any) => tool.name === 'read_file').annotations.readOnlyHint).toBe(true);
    }
    const fallback = await server.call('GET', '/v1/tools');
    expect(fallback.body.tools[0].inputSchema.$schema).toContain('2020-12');
    expectError(await server.call('GET', '/v1/tools?format=yaml'), 400, 'invalid_argument');
  });
});

// The MCP endpoint answers a plain tools/call without building an SDK server for it: the answer
// must be exactly the SDK's (compared with the same message sent as a batch, which the SDK
// serves), and clients calling side by side must each get only their own answers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concurrently } from '../../src/core/concurrently.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer();
const WS = 'mcp-plain';
const OTHER = 'mcp-plain-other';
const FILES = 50;

let agent: TestKey;
let safeAgent: TestKey;
let outsider: TestKey;
const clients: Client[] = [];

beforeAll(async () => {
  for (const ws of [WS, OTHER]) expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
  agent = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
  safeAgent = await createKey(server, { role: 'agent', workspaces: [WS] });
  outsider = await createKey(server, { role: 'agent', workspaces: [OTHER], approvalMode: 'auto' });
  for (let index = 0; index < FILES; index += 1) {
    const written = await agent.call('POST', `/v1/workspaces/${WS}/tools/write_file`, {
      path: `f${index}.txt`,
      content: `file ${index}\n`.repeat(index + 1),
    });
    expect(written.status).toBe(200);
  }
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

const HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
  'mcp-protocol-version': '2025-06-18',
};

/** POSTs a JSON-RPC body to the endpoint as the key; answers the status and the parsed body. */
async function post(secret: string, body: unknown, ws = WS): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}/v1/workspaces/${ws}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, authorization: `Bearer ${secret}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), text };
}

/** The SDK answers a batch of one message with that message's answer alone. */
const sdkAnswer = (body: any) => (Array.isArray(body) ? body[0] : body);

const toolCall = (id: number | string, name: string, args: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('a plain tools/call', () => {
  it('answers exactly as the SDK answers the same message in a batch: results, tool errors, approvals, bad arguments', async () => {
    const cases: [string, unknown][] = [
      ['read_file', { path: 'f3.txt' }],
      ['read_file', { path: 'f3.txt', startLine: 2, endLine: 3 }],
      ['read_file', { path: 'missing.txt' }],
      ['read_file', { path: '../../etc/passwd' }],
      ['read_file', { path: 'f1.txt', maxChars: -1 }],
      ['no_such_tool', {}],
      ['write_file', { path: '.git/hooks/pre-commit', content: 'x' }],
      [
        'apply_patch',
        { patch: '*** Begin Patch\n*** Update File: f2.txt\n@@\n-file 2\n+file two\n*** End Patch\n', dryRun: true },
      ],
    ];
    for (const [index, [name, args]] of cases.entries()) {
      const single = await post(agent.secret, toolCall(index, name, args));
      // The batch runs the call again: none of them changes the workspace.
      const batch = await post(agent.secret, [toolCall(index, name, args)]);
      expect(single.status).toBe(200);
      expect(batch.status).toBe(200);
      expect(single.body).toEqual(sdkAnswer(batch.body));
      // Byte for byte: a batch of one is answered with that one answer alone.
      expect(single.text).toBe(batch.text);
    }
    // A call that waits for an approver: each answer names its own pending approval, alike otherwise.
    const single = await post(safeAgent.secret, toolCall('w1', 'write_file', { path: 'a.txt', content: 'a' }));
    const batch = await post(safeAgent.secret, [toolCall('w1', 'write_file', { path: 'a.txt', content: 'a' })]);
    const shape = (answer: any) =>
      JSON.parse(
        JSON.stringify(answer)
          .replace(/apr_[0-9a-f]+/g, 'apr_ID')
          .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME'),
      );
    expect(single.body.result.isError).toBe(true);
    expect(shape(single.body)).toEqual(shape(sdkAnswer(batch.body)));
  });

  it('keeps the SDK answers for what it is not: a string id, a bad protocol version, a malformed request, a task', async () => {
    expect((await post(agent.secret, toolCall('id-1', 'read_file', { path: 'f0.txt' }))).body.id).toBe('id-1');
    const badVersion = await fetch(`${server.url}/v1/workspaces/${WS}/mcp`, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-protocol-version': '1999-01-01', authorization: `Bearer ${agent.secret}` },
      body: JSON.stringify(toolCall(1, 'read_file', { path: 'f0.txt' })),
    });
    expect(badVersion.status).toBe(400);
    expect(((await badVersion.json()) as any).error.message).toMatch(/Unsupported protocol version/);
    const malformed = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: {} };
    const noName = await post(agent.secret, malformed);
    expect(noName.body.error.code).toBeLessThan(0);
    expect(noName.body).toEqual(sdkAnswer((await post(agent.secret, [malformed])).body));
    const task = {
      ...toolCall(4, 'read_file', { path: 'f0.txt' }),
      params: { name: 'read_file', arguments: { path: 'f0.txt' }, task: { ttl: 1000 } },
    };
    const asTask = await post(agent.secret, task);
    expect(asTask.status).toBe(200);
    expect(asTask.text).toBe((await post(agent.secret, [task])).text);
    const notAccepted = await fetch(`${server.url}/v1/workspaces/${WS}/mcp`, {
      method: 'POST',
      headers: { ...HEADERS, accept: 'application/json', authorization: `Bearer ${agent.secret}` },
      body: JSON.stringify(toolCall(3, 'read_file', { path: 'f0.txt' })),
    });
    expect(notAccepted.status).toBe(406);
  });

  it('is refused for a key outside the workspace, and reads nothing there', async () => {
    const refused = await post(outsider.secret, toolCall(1, 'read_file', { path: 'f1.txt' }));
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
    expect(JSON.stringify(refused.body)).not.toContain('file 1');
  });
});

describe('two clients calling side by side on one endpoint', () => {
  it('each get exactly their own answers, 1,000 calls each', async () => {
    const connect = async () => {
      const client = new Client({ name: 'toolgate-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/v1/workspaces/${WS}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${agent.secret}` } },
        }),
      );
      clients.push(client);
      return client;
    };
    const [first, second] = await Promise.all([connect(), connect()]);
    // Each client reads files of its own parity, 8 calls in flight, both at once.
    const run = async (client: Client, parity: number) => {
      const wrong: string[] = [];
      const calls = Array.from({ length: 1000 }, (_, index) => 2 * (index % (FILES / 2)) + parity);
      await concurrently(calls, 8, async (file) => {
        const result = await client.callTool({ name: 'read_file', arguments: { path: `f${file}.txt` } });
        const read = result.structuredContent as { path: string; content: string };
        if (read.path !== `f${file}.txt` || read.content !== `file ${file}\n`.repeat(file + 1))
          wrong.push(`asked f${file}.txt, got ${read.path}`);
      });
      return wrong;
    };
    const [firstWrong, secondWrong] = await Promise.all([run(first, 0), run(second, 1)]);
    expect(firstWrong).toEqual([]);
    expect(secondWrong).toEqual([]);
  });
});

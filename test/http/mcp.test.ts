// The MCP endpoint with the official SDK client over real HTTP: the tools as listed by
// GET /v1/tools?format=mcp, calls with the same guard, approvals and metering, failures as isError.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { callApi, useServer } from '../support/server-process.ts';

const server = useServer();
const WS = 'mcp';

let agent: TestKey;
let safeAgent: TestKey;
let approver: TestKey;
const clients: Client[] = [];

beforeAll(async () => {
  expect((await server.call('PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
  agent = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
  safeAgent = await createKey(server, { role: 'agent', workspaces: [WS] });
  approver = await createKey(server, { role: 'approver', workspaces: [WS] });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

function transportFor(secret: string | undefined, path = `/v1/workspaces/${WS}/mcp`): StreamableHTTPClientTransport {
  const headers: Record<string, string> = secret === undefined ? {} : { authorization: `Bearer ${secret}` };
  return new StreamableHTTPClientTransport(new URL(server.url + path), { requestInit: { headers } });
}

async function connect(secret: string, path?: string): Promise<Client> {
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' });
  await client.connect(transportFor(secret, path));
  clients.push(client);
  return client;
}

/** The text of a tool result's single text block. */
function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe('text');
  return content[0]!.text;
}

/** The id of the pending approval of a call on `path`, once it is listed. */
const waitForPending = (path: string): Promise<string> =>
  eventually(
    async () => {
      const answer = await approver.call('GET', '/v1/approvals?status=pending');
      return (answer.body.approvals as any[]).find((candidate) => candidate.arguments?.path === path)?.id as
        string | undefined;
    },
    { what: `a pending approval for ${path}`, intervalMs: 50 },
  );

describe('tools/list', () => {
  it('lists exactly the six tools with the schemas and annotations of GET /v1/tools?format=mcp', async () => {
    const client = await connect(agent.secret);
    const listed = await client.listTools();
    const http = await server.call('GET', '/v1/tools?format=mcp');
    expect(http.status).toBe(200);
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual([
      'apply_patch',
      'bash',
      'glob',
      'grep',
      'read_file',
      'write_file',
    ]);
    expect(listed.tools).toEqual(http.body.tools);
    const hints = Object.fromEntries(
      listed.tools.map((tool) => [tool.name, [tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint]]),
    );
    expect(hints).toEqual({
      read_file: [true, false],
      write_file: [false, true],
      apply_patch: [false, true],
      bash: [false, true],
      grep: [true, false],
      glob: [true, false],
    });
    expect(client.getServerVersion()?.name).toBe('toolgate');
  });
});

describe('tools/call', () => {
  it('searches with grep and glob', async () => {
    const client = await connect(agent.secret);
    for (const [path, content] of [
      ['search/a.ts', 'const answer = 42;\n// TODO: name it\n'],
      ['search/b.py', 'answer = 42\n'],
      ['search/c.ts', 'nothing here\n'],
    ]) {
      const written = await client.callTool({ name: 'write_file', arguments: { path, content } });
      expect(written.isError).toBeFalsy();
    }
    const found = await client.callTool({
      name: 'grep',
      arguments: { pattern: 'answer\\s*=', path: 'search', outputMode: 'content' },
    });
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toEqual({
      matches: [
        { path: 'search/a.ts', line: 1, text: 'const answer = 42;' },
        { path: 'search/b.py', line: 1, text: 'answer = 42' },
      ],
      files: 2,
      truncated: false,
    });
    const typed = await client.callTool({ name: 'grep', arguments: { pattern: '42', type: 'py', path: 'search' } });
    expect(typed.structuredContent).toEqual({ paths: ['search/b.py'], truncated: false });
    const listed = await client.callTool({ name: 'glob', arguments: { pattern: 'search/*.ts' } });
    expect(listed.structuredContent).toEqual({ paths: ['search/a.ts', 'search/c.ts'], truncated: false });
    const invalid = await client.callTool({ name: 'grep', arguments: { pattern: 'a(b' } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toContain('invalid_argument');
  });

  it('round-trips write_file then read_file', async () => {
    const client = await connect(agent.secret);
    const written = await client.callTool({
      name: 'write_file',
      arguments: { path: 'notes/hello.txt', content: 'héllo\n' },
    });
    expect(written.isError).toBeFalsy();
    expect(written.structuredContent).toMatchObject({
      resolvedPath: 'notes/hello.txt',
      created: true,
      bytesWritten: 7,
    });
    expect(JSON.parse(textOf(written))).toEqual(written.structuredContent);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/hello.txt' } });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({
      path: 'notes/hello.txt',
      content: 'héllo\n',
      totalLines: 1,
      truncated: false,
    });
    expect(
      (await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'notes/hello.txt' })).body.result
        .content,
    ).toBe('héllo\n');
  });

  it('applies a patch in the Codex envelope', async () => {
    const client = await connect(agent.secret);
    await client.callTool({ name: 'write_file', arguments: { path: 'greet.txt', content: 'hello\n' } });
    const patch =
      '*** Begin Patch\n*** Update File: greet.txt\n@@\n-hello\n+hello, world\n*** Add File: added.txt\n+new\n*** End Patch\n';
    const patched = await client.callTool({ name: 'apply_patch', arguments: { patch } });
    expect(patched.isError).toBeFalsy();
    expect(patched.structuredContent).toMatchObject({ summary: 'A added.txt\nM greet.txt' });
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'greet.txt' } });
    expect(read.structuredContent).toMatchObject({ content: 'hello, world\n' });
  });

  it('runs bash exec', async () => {
    const client = await connect(agent.secret);
    const ran = await client.callTool({ name: 'bash', arguments: { action: 'exec', command: 'echo hi' } });
    expect(ran.isError).toBeFalsy();
    expect(ran.structuredContent).toMatchObject({ exitCode: 0, stdout: 'hi\n', timedOut: false });
  });

  it('answers a path escape with isError and the contract code first', async () => {
    const client = await connect(agent.secret);
    const escaped = await client.callTool({ name: 'read_file', arguments: { path: '../etc/passwd' } });
    expect(escaped.isError).toBe(true);
    expect(textOf(escaped)).toMatch(/^path_outside_workspace: /);
    expect(escaped.structuredContent).toMatchObject({ error: { code: 'path_outside_workspace' } });
  });

  it('answers bad arguments, an unknown tool and a missing file with isError results', async () => {
    const client = await connect(agent.secret);
    const invalid = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', colour: 'red' } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^invalid_argument: .*\ndetails: \{"issues":/s);
    const unknown = await client.callTool({ name: 'delete_everything', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^not_found: There is no tool named "delete_everything"/);
    const missing = await client.callTool({ name: 'read_file', arguments: { path: 'absent.txt' } });
    expect(textOf(missing)).toMatch(/^not_found: /);
  });

  it('treats a workspace outside the key as absent: its endpoint answers 404 not_found, as every route of it does', async () => {
    expect((await server.call('PUT', '/v1/workspaces/mcp-private')).status).toBe(201);
    const refused = await new Client({ name: 'toolgate-test', version: '1.0.0' })
      .connect(transportFor(agent.secret, '/v1/workspaces/mcp-private/mcp'))
      .then(
        () => 'connected',
        (error: Error) => error.message,
      );
    expect(refused).toMatch(/"code":"not_found"/);
    const answer = await callApi(
      server.url,
      agent.secret,
      'POST',
      '/v1/workspaces/mcp-private/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: 'application/json, text/event-stream' },
    );
    expect({ status: answer.status, code: answer.body.error?.code }).toEqual({ status: 404, code: 'not_found' });
    expect(answer.body.error.message).toMatch(/^Workspace mcp-private does not exist/);
  });
});

describe('HTTP', () => {
  it('refuses a connection without a key with 401', async () => {
    const client = new Client({ name: 'toolgate-test', version: '1.0.0' });
    const refused = await client.connect(transportFor(undefined)).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
    expect((refused as Error).message).toContain('unauthorized');
  });

  it('refuses runner keys with 403 and a bad waitMs with 400', async () => {
    const runner = await createKey(server, { role: 'runner', workspaces: ['*'] });
    const forbidden = await new Client({ name: 'toolgate-test', version: '1.0.0' })
      .connect(transportFor(runner.secret))
      .catch((error: unknown) => error);
    expect((forbidden as StreamableHTTPError).code).toBe(403);
    const badWait = await new Client({ name: 'toolgate-test', version: '1.0.0' })
      .connect(transportFor(agent.secret, `/v1/workspaces/${WS}/mcp?waitMs=soon`))
      .catch((error: unknown) => error);
    expect((badWait as StreamableHTTPError).code).toBe(400);
  });

  it('answers GET and DELETE with 405: the server is stateless, with no stream or session', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await callApi(server.url, agent.secret, method, `/v1/workspaces/${WS}/mcp`, undefined, {
        accept: 'text/event-stream',
      });
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
  });
});

describe('approvals', () => {
  it('answers a call that needs approval with approval_pending, and nothing is written', async () => {
    const client = await connect(safeAgent.secret);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes/hello.txt' } });
    expect(read.isError).toBeFalsy();
    const held = await client.callTool({ name: 'write_file', arguments: { path: 'held.txt', content: 'held' } });
    expect(held.isError).toBe(true);
    const text = textOf(held);
    expect(text).toMatch(/^approval_pending: /);
    const id = (held.structuredContent as any).approval.id as string;
    expect(id).toMatch(/^apr_/);
    expect(text).toContain(id);
    expect(held.structuredContent).toMatchObject({
      approval: { status: 'pending', tool: 'write_file', workspace: WS },
    });
    expect(
      (await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'held.txt' })).body.error.code,
    ).toBe('not_found');
  });

  it('with ?waitMs, waits for the decision: a rejection reads [approval-rejected], an approval gives the result', async () => {
    const client = await connect(safeAgent.secret, `/v1/workspaces/${WS}/mcp?waitMs=30000`);
    const rejecting = client.callTool({ name: 'write_file', arguments: { path: 'rejected.txt', content: 'no' } });
    const rejectId = await waitForPending('rejected.txt');
    expect(
      (await approver.call('POST', `/v1/approvals/${rejectId}/decision`, { decision: 'reject', reason: 'not today' }))
        .status,
    ).toBe(200);
    const rejected = await rejecting;
    expect(rejected.isError).toBe(true);
    expect(textOf(rejected)).toMatch(/^\[approval-rejected\] not today/);

    const approving = client.callTool({ name: 'write_file', arguments: { path: 'approved.txt', content: 'yes' } });
    const approveId = await waitForPending('approved.txt');
    expect((await approver.call('POST', `/v1/approvals/${approveId}/decision`, { decision: 'approve' })).status).toBe(
      200,
    );
    const approved = await approving;
    expect(approved.isError).toBeFalsy();
    expect(approved.structuredContent).toMatchObject({ resolvedPath: 'approved.txt', created: true });
    expect(
      (await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'rejected.txt' })).body.error.code,
    ).toBe('not_found');
  });
});

describe('usage', () => {
  it('meters every MCP tool call exactly once, bytes in being the arguments JSON', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
    const client = await connect(key.secret);
    await client.listTools();
    const writeArgs = { path: 'usage/ü.txt', content: 'métered\n' };
    const calls: [string, Record<string, unknown>][] = [
      ['write_file', writeArgs],
      ['read_file', { path: 'usage/ü.txt' }],
      ['read_file', { path: '../etc/passwd' }],
      ['apply_patch', { patch: '*** Begin Patch\n*** Add File: usage/p.txt\n+p\n*** End Patch\n' }],
      ['bash', { action: 'exec', command: 'true' }],
      ['bash', { action: 'list' }],
    ];
    for (const [name, args] of calls) await client.callTool({ name, arguments: args });
    const answer = await key.call('GET', '/v1/usage?groupBy=tool');
    expect(answer.status).toBe(200);
    const rows = Object.fromEntries((answer.body.rows as any[]).map((row) => [row.group, row]));
    expect(Object.keys(rows).sort()).toEqual(['apply_patch', 'bash:exec', 'bash:list', 'read_file', 'write_file']);
    expect(rows.read_file).toMatchObject({ calls: 2, errors: 1 });
    for (const group of ['write_file', 'apply_patch', 'bash:exec', 'bash:list'])
      expect(rows[group]).toMatchObject({ calls: 1, errors: 0 });
    expect(rows.write_file.bytesIn).toBe(Buffer.byteLength(JSON.stringify(writeArgs), 'utf8'));
  });
});

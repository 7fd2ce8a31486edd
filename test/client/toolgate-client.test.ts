// The typed client against the real server: answers, the error mapping, approvals as values, the package export.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolgateClient, ToolgateConnectionError, ToolgateError, type Approval } from '../../src/client/index.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/runner-process.ts';
import { repoRoot, useServer } from '../support/server-process.ts';
import { tarBytes } from '../support/tar-bytes.ts';
import { failure, resultOf } from '../support/tool-outcome.ts';

const server = useServer();
const WS = 'client';

/** A client of the test server with another key (or none). */
const clientWith = (key: string | undefined) => new ToolgateClient({ url: server.url, key });

beforeAll(async () => {
  await server.client.putWorkspace(WS);
});

describe('tools', () => {
  it('answers each tool with the contract result, typed', async () => {
    const client = server.client;
    const written = resultOf(await client.writeFile(WS, { path: 'src/a.txt', content: 'one\ntwo\n' }));
    expect(written).toMatchObject({ resolvedPath: 'src/a.txt', created: true, bytesWritten: 8 });
    const read = resultOf(await client.readFile(WS, { path: 'src/a.txt', startLine: 2 }));
    expect(read).toEqual({
      path: 'src/a.txt',
      content: 'two\n',
      startLine: 2,
      endLine: 2,
      totalLines: 2,
      truncated: false,
      version: written.version,
    });
    const patched = resultOf(
      await client.applyPatch(WS, {
        patch: '*** Begin Patch\n*** Update File: src/a.txt\n@@\n-two\n+2\n*** End Patch\n',
      }),
    );
    expect(patched).toMatchObject({
      summary: 'M src/a.txt',
      dryRun: false,
      files: [{ path: 'src/a.txt', action: 'update' }],
    });
    const listed = resultOf(await client.bash(WS, { action: 'list' }));
    expect(listed.processes).toEqual([]);
    const exec = resultOf(await client.bash(WS, { action: 'exec', command: 'cat src/a.txt' }));
    expect(exec).toMatchObject({ exitCode: 0, stdout: 'one\n2\n', timedOut: false });
    const byName = resultOf(await client.callTool(WS, 'read_file', { path: 'src/a.txt' }));
    expect(byName.content).toBe('one\n2\n');
  });

  it('sends arguments as given, so the server refuses unknown ones; the types refuse them first', async () => {
    // @ts-expect-error: `line` is not an argument of read_file (the types come from its zod schema).
    const error = await failure(server.client.readFile(WS, { path: 'src/a.txt', line: 3 }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_argument' });
    expect(error.message).toContain('"line"');
  });
});

describe('errors', () => {
  it('throws ToolgateError with the status, code, message and details of the error body', async () => {
    const error = await failure(server.client.readFile(WS, { path: 'missing.txt' }));
    expect(error).toBeInstanceOf(ToolgateError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ToolgateError');
    expect(error).toMatchObject({ status: 404, code: 'not_found', details: { path: 'missing.txt' } });
    expect(error.message).toMatch(/missing\.txt does not exist/);
    expect(error.body).toEqual({
      error: { code: 'not_found', message: error.message, details: { path: 'missing.txt' } },
    });
    expect(await failure(server.client.readFile(WS, { path: '../x' }))).toMatchObject({
      status: 403,
      code: 'path_outside_workspace',
    });
  });

  it('maps a missing or unknown key to unauthorized, on every kind of route', async () => {
    for (const key of [undefined, 'tg_not_a_key']) {
      expect(await failure(clientWith(key).readFile(WS, { path: 'src/a.txt' }))).toMatchObject({
        status: 401,
        code: 'unauthorized',
      });
      expect(await failure(clientWith(key).listKeys())).toMatchObject({ status: 401, code: 'unauthorized' });
    }
    expect(await clientWith(undefined).health()).toEqual({ ok: true });
  });

  it('carries Retry-After of rate_limited as retryAfterSeconds', async () => {
    const key = await server.client.createKey({
      name: 'slow',
      role: 'agent',
      workspaces: [WS],
      approvalMode: 'auto',
      rateLimitPerMinute: 1,
    });
    const client = clientWith(key.secret);
    resultOf(await client.readFile(WS, { path: 'src/a.txt' }));
    const error = await failure(client.readFile(WS, { path: 'src/a.txt' }));
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.retryAfterSeconds).toBeGreaterThan(0);
  });

  it('throws ToolgateConnectionError naming the URL when nothing listens there', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const error = await new ToolgateClient({ url, key: server.key })
      .getWorkspace(WS)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolgateConnectionError);
    expect((error as ToolgateConnectionError).url).toBe(url);
    expect((error as Error).message).toContain(`Could not reach the toolgate server at ${url}`);
    expect((error as Error).message).toContain('ECONNREFUSED');
  });

  it('sends a GET again once when its kept-alive connection was closed under it; anything else is not sent again', async () => {
    let sent = 0;
    // The first request of each call finds its connection closed, as undici reports a stale keep-alive socket.
    const flaky: typeof fetch = async (input, init) => {
      sent += 1;
      if (sent % 2 === 1)
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
        });
      return fetch(input, init);
    };
    const client = new ToolgateClient({ url: server.url, key: server.key, fetch: flaky });
    expect(await client.getWorkspace(WS)).toMatchObject({ id: WS });
    expect(sent).toBe(2);
    const write = await client
      .writeFile(WS, { path: 'never-twice.txt', content: 'x' })
      .catch((thrown: unknown) => thrown);
    expect(write).toBeInstanceOf(ToolgateConnectionError);
    expect(sent).toBe(3);
    expect((await server.client.listFiles(WS)).entries.map((entry) => entry.path)).not.toContain('never-twice.txt');
  });

  it('sends an archive upload (a PUT, idempotent) again once when its connection was closed under it, not one sent as a stream', async () => {
    let sent = 0;
    // A body written to a socket the server closed while it sat idle fails with EPIPE.
    const flaky: typeof fetch = async (input, init) => {
      sent += 1;
      if (sent % 2 === 1)
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) });
      return fetch(input, init);
    };
    const client = new ToolgateClient({ url: server.url, key: server.key, fetch: flaky });
    const archive = tarBytes([{ name: 'uploaded-again.txt', content: 'once\n' }]);
    expect(await client.upload(WS, archive)).toMatchObject({ files: 1 });
    expect(sent).toBe(2);
    const streamed = await client.upload(WS, new Blob([archive]).stream()).catch((thrown: unknown) => thrown);
    expect(streamed).toBeInstanceOf(ToolgateConnectionError);
    expect(sent).toBe(3);
  });

  it('reports an answer that is not toolgate JSON as unexpected_response, through an injected fetch', async () => {
    const proxy: typeof fetch = async () =>
      new Response('<html>Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } });
    const error = await failure(
      new ToolgateClient({ url: server.url, key: server.key, fetch: proxy }).getWorkspace(WS),
    );
    expect(error).toMatchObject({ status: 502, code: 'unexpected_response', body: '<html>Bad Gateway</html>' });
    expect(error.message).toContain('Bad Gateway');
  });
});

describe('approvals', () => {
  let agent: ToolgateClient;
  beforeAll(async () => {
    agent = clientWith((await server.client.createKey({ name: 'careful', role: 'agent', workspaces: [WS] })).secret);
  });

  it('answers a call that needs approval with { approval } instead of throwing; approving runs it once', async () => {
    const answer = await agent.writeFile(WS, { path: 'held.txt', content: 'held\n' });
    expect(answer.result).toBeUndefined();
    const approval: Approval = answer.approval!;
    expect(approval).toMatchObject({
      status: 'pending',
      tool: 'write_file',
      workspace: WS,
      arguments: { path: 'held.txt', content: 'held\n' },
    });
    expect((await server.client.listApprovals({ status: 'pending' })).approvals.map((listed) => listed.id)).toContain(
      approval.id,
    );
    expect(await failure(server.client.readFile(WS, { path: 'held.txt' }))).toMatchObject({ code: 'not_found' });
    const decided = await server.client.decideApproval(approval.id, { decision: 'approve' });
    expect(decided).toMatchObject({ id: approval.id, status: 'approved', result: { created: true, bytesWritten: 5 } });
    expect(await agent.getApproval(approval.id)).toMatchObject({ status: 'approved', result: { created: true } });
    expect(resultOf(await server.client.readFile(WS, { path: 'held.txt' })).content).toBe('held\n');
    expect(await failure(server.client.decideApproval(approval.id, { decision: 'reject' }))).toMatchObject({
      status: 409,
      code: 'conflict',
    });
  });

  it('with waitMs, answers the outcome: a rejection is thrown as approval_rejected with the stop reason', async () => {
    const waiting = agent.writeFile(WS, { path: 'refused.txt', content: 'x' }, { waitMs: 30_000 });
    const pending = await eventually(async () =>
      (await server.client.listApprovals({ status: 'pending' })).approvals.find(
        (listed) => listed.arguments !== null && (listed.arguments as { path?: string }).path === 'refused.txt',
      ),
    );
    await server.client.decideApproval(pending.id, { decision: 'reject', reason: 'not today' });
    const error = await failure(waiting);
    expect(error).toMatchObject({ status: 403, code: 'approval_rejected', details: { approvalId: pending.id } });
    expect(error.message).toBe('[approval-rejected] not today');
    expect(error.body).toMatchObject({ stopReason: 'BLOCKED_BY_APPROVAL' });
  });

  it('with waitMs and no decision, still answers { approval }', async () => {
    const answer = await agent.writeFile(WS, { path: 'later.txt', content: 'x' }, { waitMs: 200 });
    expect(answer.approval).toMatchObject({ status: 'pending', tool: 'write_file' });
  });
});

describe('workspaces, keys, usage, tools', () => {
  it('creates, describes, lists and deletes a workspace', async () => {
    expect(await server.client.putWorkspace('client-ws', { excludedPaths: ['target'] })).toMatchObject({
      created: true,
      workspace: { id: 'client-ws', files: 0 },
    });
    expect((await server.client.putWorkspace('client-ws')).created).toBe(false);
    resultOf(await server.client.writeFile('client-ws', { path: 'd/e.txt', content: 'e' }));
    expect(await server.client.getWorkspace('client-ws')).toMatchObject({ id: 'client-ws', files: 1, bytes: 1 });
    expect((await server.client.listFiles('client-ws')).entries.map((entry) => entry.path)).toEqual(['d']);
    expect(
      (await server.client.listFiles('client-ws', { recursive: true })).entries.map((entry) => [
        entry.path,
        entry.type,
      ]),
    ).toEqual([
      ['d', 'dir'],
      ['d/e.txt', 'file'],
    ]);
    const first = await server.client.listFiles('client-ws', { recursive: true, limit: 1 });
    expect(first.entries.map((entry) => entry.path)).toEqual(['d']);
    const second = await server.client.listFiles('client-ws', { recursive: true, limit: 1, cursor: first.nextCursor! });
    expect([second.entries.map((entry) => entry.path), second.nextCursor]).toEqual([['d/e.txt'], undefined]);
    expect(await server.client.fork('client-ws', 'client-fork')).toMatchObject({
      id: 'client-fork',
      files: 1,
      bytes: 1,
    });
    await expect(server.client.fork('client-ws', 'client-fork')).rejects.toMatchObject({
      status: 409,
      code: 'conflict',
    });
    await server.client.deleteWorkspace('client-fork');
    await server.client.deleteWorkspace('client-ws');
    expect(await failure(server.client.getWorkspace('client-ws'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await failure(server.client.deleteWorkspace('client-ws'))).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('creates, lists and revokes keys; a revoked key is unauthorized at once', async () => {
    const created = await server.client.createKey({
      name: 'short-lived',
      role: 'agent',
      workspaces: [WS],
      tools: ['read_file'],
    });
    expect(created).toMatchObject({ name: 'short-lived', role: 'agent', tools: ['read_file'], approvalMode: 'safe' });
    expect(created.secret).toMatch(/^tg_/);
    const listed = (await server.client.listKeys()).keys.find((key) => key.id === created.id);
    expect(listed).toMatchObject({ name: 'short-lived' });
    expect(listed).not.toHaveProperty('secret');
    expect((await clientWith(created.secret).listKeys()).keys.map((key) => key.id)).toEqual([created.id]);
    await server.client.revokeKey(created.id);
    expect(await failure(clientWith(created.secret).readFile(WS, { path: 'src/a.txt' }))).toMatchObject({
      status: 401,
      code: 'unauthorized',
    });
    expect(await failure(server.client.revokeKey(created.id))).toMatchObject({ status: 404, code: 'not_found' });
    expect(
      await failure(server.client.createKey({ name: 'bad', role: 'agent', workspaces: [WS], tools: ['read_fil'] })),
    ).toMatchObject({ code: 'invalid_argument' });
  });

  it('searches with grep (its result typed by outputMode) and glob', async () => {
    await server.client.writeFile(WS, { path: 'search/one.ts', content: 'let a = 1;\nlet b = 2;\n' });
    await server.client.writeFile(WS, { path: 'search/two.md', content: 'let it be\n' });
    const content = await server.client.grep(WS, {
      pattern: 'let \\w',
      path: 'search',
      outputMode: 'content',
      after: 1,
    });
    expect(content.result?.matches.map((match) => [match.path, match.line, match.text, match.after])).toEqual([
      ['search/one.ts', 1, 'let a = 1;', undefined],
      ['search/one.ts', 2, 'let b = 2;', undefined],
      ['search/two.md', 1, 'let it be', undefined],
    ]);
    const files = await server.client.grep(WS, { pattern: 'b', path: 'search', type: 'ts' });
    expect(files.result?.paths).toEqual(['search/one.ts']);
    const counts = await server.client.grep(WS, { pattern: 'let', path: 'search', outputMode: 'count' });
    expect(counts.result?.counts).toEqual([
      { path: 'search/one.ts', count: 2 },
      { path: 'search/two.md', count: 1 },
    ]);
    expect((await server.client.glob(WS, { pattern: '**/*.md', path: 'search' })).result).toEqual({
      paths: ['search/two.md'],
      truncated: false,
    });
    expect(await failure(server.client.grep(WS, { pattern: '(' }))).toMatchObject({
      status: 400,
      code: 'invalid_argument',
    });
  });

  it('reads usage and lists tools in each format', async () => {
    const usage = await server.client.usage({ groupBy: 'tool', from: new Date(Date.now() - 3_600_000) });
    expect(usage.rows.find((row) => row.group === 'read_file')?.calls).toBeGreaterThan(0);
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'read_file',
      'write_file',
      'apply_patch',
      'bash',
      'grep',
      'glob',
    ]);
    const openai = await server.client.listTools('openai');
    expect(openai.tools[0]).toMatchObject({ type: 'function', function: { name: 'read_file' } });
    expect(await failure(server.client.listTools('yaml' as 'openai'))).toMatchObject({
      status: 400,
      code: 'invalid_argument',
    });
  });
});

describe('the package export', () => {
  it('resolves toolgate/client to the client', async () => {
    const script =
      "const m = await import('toolgate/client'); console.log(typeof m.ToolgateClient, typeof m.ToolgateError);";
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repoRoot },
    );
    expect(stdout.trim()).toBe('function function');
  });
});

describe('history and hooks', () => {
  it('checkpoints, diffs and restores a workspace, and configures a hook', async () => {
    await server.client.putWorkspace('client-history', { autoCheckpoint: false });
    resultOf(await server.client.writeFile('client-history', { path: 'a.txt', content: 'one\n' }));
    const checkpoint = await server.client.createCheckpoint('client-history', 'first');
    expect(checkpoint.id).toMatch(/^[0-9a-f]{40}$/);
    resultOf(await server.client.writeFile('client-history', { path: 'a.txt', content: 'two\n', mode: 'overwrite' }));
    const { diff } = await server.client.diff('client-history', checkpoint.id);
    expect(diff).toContain('-one\n+two');
    expect((await server.client.listCheckpoints('client-history')).checkpoints).toEqual([
      { id: checkpoint.id, message: 'first', createdAt: checkpoint.createdAt },
    ]);
    expect((await server.client.restore('client-history', checkpoint.id)).restored).toBe(checkpoint.id);
    expect(resultOf(await server.client.readFile('client-history', { path: 'a.txt' })).content).toBe('one\n');
    expect(await failure(server.client.diff('client-history', '0'.repeat(40)))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
    const hook = await server.client.putHook('client-hook', {
      secret: 'a secret of sixteen+ characters',
      workspace: 'client-history',
      checkpoint: true,
    });
    expect(hook).toMatchObject({ id: 'client-hook', workspace: 'client-history', checkpoint: true });
    expect(JSON.stringify(hook)).not.toContain('sixteen');
    expect(await server.client.getHook('client-hook')).toEqual(hook);
    expect((await server.client.listHooks()).hooks).toContainEqual(hook);
    await server.client.deleteHook('client-hook');
    expect(await failure(server.client.getHook('client-hook'))).toMatchObject({ status: 404, code: 'not_found' });
  });
});

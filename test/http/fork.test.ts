// POST /v1/workspaces/{ws}/fork: the same files, links, settings and checkpoints under a new name,
// sharing contents; each side then sees only its own changes. Scope, names and bodies refused.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { syncWorkspaceChanges } from '../support/runner-sync.ts';
import { useServer } from '../support/server-process.ts';

// A small body limit: on the Cloudflare home a fork then travels between objects in several batches.
const server = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_MAX_BODY_BYTES: '262144' } });
const SOURCE = 'fork-source';
const FILES = 1000;
const encoder = new TextEncoder();
const textOf = (i: number) => `file ${i}\n${'x'.repeat(i % 50)}\n`;

const tool = (ws: string, name: string, args: unknown) =>
  server.call('POST', `/v1/workspaces/${ws}/tools/${name}`, args);
const fork = (from: string, body: unknown) => server.call('POST', `/v1/workspaces/${from}/fork`, body);
const listing = async (ws: string): Promise<Map<string, { type: string; size: number; target?: string }>> => {
  const answer = await server.call('GET', `/v1/workspaces/${ws}/files?recursive=true`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return new Map(answer.body.entries.map((entry: { path: string }) => [entry.path, entry]));
};
const read = async (ws: string, path: string) => {
  const answer = await tool(ws, 'read_file', { path });
  return answer.status === 200 ? (answer.body.result.content as string) : answer.body.error.code;
};
const patch = (ws: string, body: string) =>
  tool(ws, 'apply_patch', { patch: `*** Begin Patch\n${body}*** End Patch\n` });

let checkpoint: string;

beforeAll(async () => {
  expect((await server.call('PUT', `/v1/workspaces/${SOURCE}`, { excludedPaths: ['vendor'] })).status).toBe(201);
  const files = Array.from({ length: FILES }, (_, i) => ({
    op: 'write' as const,
    path: `src/d${i % 10}/f${i}.txt`,
    bytes: encoder.encode(textOf(i)),
  }));
  for (let at = 0; at < FILES; at += 500) await syncWorkspaceChanges(server, SOURCE, files.slice(at, at + 500));
  await syncWorkspaceChanges(server, SOURCE, [
    { op: 'symlink', path: 'link', target: 'src/d1/f1.txt' },
    { op: 'mkdir', path: 'empty' },
  ]);
  const made = await server.call('POST', `/v1/workspaces/${SOURCE}/checkpoints`, { message: 'before the fork' });
  expect(made.status).toBe(201);
  checkpoint = made.body.id;
}, 60_000);

describe('a fork', () => {
  it('has the same files, links, settings and checkpoints, and each side then sees only its own changes', async () => {
    const before = await listing(SOURCE);
    const answer = await fork(SOURCE, { to: 'fork-a' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ id: 'fork-a', files: FILES, bytes: expect.any(Number) });
    const info = (await server.call('GET', `/v1/workspaces/${SOURCE}`)).body;
    expect(answer.body).toMatchObject({ files: info.files, bytes: info.bytes });
    const forked = await listing('fork-a');
    expect([...forked.keys()]).toEqual([...before.keys()]);
    for (const [path, entry] of before) expect(forked.get(path)).toMatchObject({ type: entry.type, size: entry.size });
    expect(forked.get('link')).toMatchObject({ type: 'symlink', target: 'src/d1/f1.txt' });
    expect(await read('fork-a', 'src/d7/f997.txt')).toBe(textOf(997));
    expect(await read('fork-a', 'link')).toBe(textOf(1));
    // Settings came along: the excluded path refuses writes in the fork too.
    expect((await tool('fork-a', 'write_file', { path: 'vendor/x', content: 'x' })).body.error.code).toBe(
      'path_denied',
    );
    // Checkpoints made before the fork exist in both.
    const checkpoints = (ws: string) => server.call('GET', `/v1/workspaces/${ws}/checkpoints`);
    expect((await checkpoints('fork-a')).body.checkpoints.map((c: { id: string }) => c.id)).toEqual([checkpoint]);

    // Change, add and delete on both sides.
    expect((await tool(SOURCE, 'write_file', { path: 'src/d0/f0.txt', content: 'source changed\n' })).status).toBe(200);
    expect((await tool(SOURCE, 'write_file', { path: 'only-source.txt', content: 's\n' })).status).toBe(200);
    expect((await patch(SOURCE, '*** Delete File: src/d2/f2.txt\n')).status).toBe(200);
    expect((await tool('fork-a', 'write_file', { path: 'src/d0/f0.txt', content: 'fork changed\n' })).status).toBe(200);
    expect((await tool('fork-a', 'write_file', { path: 'only-fork.txt', content: 'f\n' })).status).toBe(200);
    expect((await patch('fork-a', '*** Delete File: src/d3/f3.txt\n')).status).toBe(200);

    expect(await read(SOURCE, 'src/d0/f0.txt')).toBe('source changed\n');
    expect(await read('fork-a', 'src/d0/f0.txt')).toBe('fork changed\n');
    expect(await read(SOURCE, 'only-fork.txt')).toBe('not_found');
    expect(await read('fork-a', 'only-source.txt')).toBe('not_found');
    expect(await read(SOURCE, 'src/d3/f3.txt')).toBe(textOf(3));
    expect(await read('fork-a', 'src/d2/f2.txt')).toBe(textOf(2));
    expect(await read(SOURCE, 'src/d2/f2.txt')).toBe('not_found');
    expect(await read('fork-a', 'src/d3/f3.txt')).toBe('not_found');
    const grep = await tool('fork-a', 'grep', { pattern: 'changed', outputMode: 'content' });
    expect(grep.body.result.matches).toEqual([{ path: 'src/d0/f0.txt', line: 1, text: 'fork changed' }]);

    // A checkpoint in one is not in the other; restoring the shared one in the fork brings its files back.
    expect((await server.call('POST', `/v1/workspaces/fork-a/checkpoints`, { message: 'fork only' })).status).toBe(201);
    expect((await checkpoints(SOURCE)).body.checkpoints).toHaveLength(1);
    expect((await checkpoints('fork-a')).body.checkpoints).toHaveLength(2);
    const restored = await server.call('POST', '/v1/workspaces/fork-a/restore', { checkpoint });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(await read('fork-a', 'src/d3/f3.txt')).toBe(textOf(3));
    expect(await read('fork-a', 'only-fork.txt')).toBe('not_found');
    expect(await read(SOURCE, 'only-source.txt')).toBe('s\n');
  });

  it('keeps every content it shares after the workspace it came from is deleted', async () => {
    expect((await fork(SOURCE, { to: 'fork-b' })).status).toBe(201);
    expect((await fork('fork-b', { to: 'fork-c' })).status).toBe(201);
    expect((await server.call('DELETE', `/v1/workspaces/${SOURCE}`)).status).toBe(204);
    expect((await server.call('DELETE', '/v1/workspaces/fork-b')).status).toBe(204);
    for (const i of [1, 500, 999]) expect(await read('fork-c', `src/d${i % 10}/f${i}.txt`)).toBe(textOf(i));
    const restored = await server.call('POST', '/v1/workspaces/fork-c/restore', { checkpoint });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(await read('fork-c', 'src/d2/f2.txt')).toBe(textOf(2));
    // A fork's name deleted and made again is a new, empty workspace.
    expect((await server.call('PUT', `/v1/workspaces/${SOURCE}`)).status).toBe(201);
    expect((await listing(SOURCE)).size).toBe(0);
  });

  it('is refused, changing nothing, when the name is taken, invalid, or outside the key’s scope', async () => {
    expect((await server.call('PUT', '/v1/workspaces/taken')).status).toBe(201);
    expect((await tool('taken', 'write_file', { path: 'mine.txt', content: 'mine\n' })).status).toBe(200);
    const taken = await fork('fork-a', { to: 'taken' });
    expect([taken.status, taken.body.error?.code]).toEqual([409, 'conflict']);
    expect([...(await listing('taken')).keys()]).toEqual(['mine.txt']);
    for (const body of [
      { to: '../x' },
      { to: 'UPPER' },
      { to: '' },
      { to: 'a'.repeat(64) },
      {},
      { to: 1 },
      { to: 'ok', extra: 1 },
    ]) {
      const answer = await fork('fork-a', body);
      expect([answer.status, answer.body.error?.code], JSON.stringify(body)).toEqual([400, 'invalid_argument']);
    }
    const raw = await fetch(`${server.url}/v1/workspaces/fork-a/fork`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
      body: '{"to": ',
    });
    expect(raw.status).toBe(400);
    const missing = await fork('never-made', { to: 'from-nothing' });
    expect([missing.status, missing.body.error?.code]).toEqual([404, 'not_found']);

    // A key must hold both: the source (else 404, as if absent) and the new name (else 403, before any lookup).
    const agent = await createKey(server, { role: 'agent', workspaces: ['fork-a', 'agent-copy', 'agent-stolen'] });
    expect((await agent.call('POST', '/v1/workspaces/fork-a/fork', { to: 'agent-copy' })).status).toBe(201);
    const outside = await agent.call('POST', '/v1/workspaces/fork-a/fork', { to: 'taken' });
    expect([outside.status, outside.body.error?.code]).toEqual([403, 'forbidden']);
    const unseen = await agent.call('POST', '/v1/workspaces/taken/fork', { to: 'agent-stolen' });
    expect(unseen.status).toBe(404);
    expect((await server.call('GET', '/v1/workspaces/agent-stolen')).status).toBe(404);
    expect([...(await listing('taken')).keys()]).toEqual(['mine.txt']);
  });
});

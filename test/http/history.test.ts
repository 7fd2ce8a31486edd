// docs/api.md History over real HTTP: checkpoint, change, diff, restore byte for byte (symlinks and binary files
// included), the list's order, errors, roles, and the automatic checkpoint after apply_patch.
import { beforeAll, describe, expect, it } from 'vitest';
import { checkpointListSchema, checkpointSchema, diffSchema, restoreSchema } from '../../src/contract/http-answers.ts';
import { fileHashes } from '../support/file-hashes.ts';
import { createKey } from '../support/keys.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer();
const ws = 'hist';

const call = (method: string, path: string, body?: unknown) => server.call(method, `/v1/workspaces/${ws}${path}`, body);
const tool = (name: string, args: unknown, workspace = ws) =>
  server.call('POST', `/v1/workspaces/${workspace}/tools/${name}`, args);

async function bash(command: string): Promise<string> {
  const answer = await tool('bash', { action: 'exec', command });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.result.exitCode, JSON.stringify(answer.body.result)).toBe(0);
  return answer.body.result.stdout;
}

/** What a user can observe of the workspace: every entry, each file's bytes (by SHA-256) and each link's target. */
async function observe(): Promise<unknown> {
  const listing = await call('GET', '/files?recursive=true');
  const blobs = await fileHashes(server, ws);
  return listing.body.entries.map((entry: { path: string; type: string; size: number; target?: string }) => ({
    path: entry.path,
    type: entry.type,
    size: entry.size,
    target: entry.target,
    blob: blobs.get(entry.path),
  }));
}

const read = async (path: string) => (await tool('read_file', { path })).body.result.content;

describe('checkpoints, diff and restore', () => {
  let first: string;
  let saved: unknown;

  beforeAll(async () => {
    expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    await tool('write_file', { path: 'a.txt', content: 'one\ntwo\n' });
    await tool('write_file', { path: 'del.txt', content: 'gone\n' });
    await tool('write_file', { path: 'keep.txt', content: 'kept\n' });
    await tool('write_file', { path: 'src/deep/x.ts', content: 'export {};\n' });
    await bash("ln -s a.txt link && printf '\\000\\001\\002\\377' > bin.dat");
  });

  it('creates a checkpoint: 201 with the commit id and time', async () => {
    const answer = await call('POST', '/checkpoints', { message: 'first' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(checkpointSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body.id).toMatch(/^[0-9a-f]{40}$/);
    expect(new Date(answer.body.createdAt).toISOString()).toBe(answer.body.createdAt);
    first = answer.body.id;
    saved = await observe();
  });

  it('diffs exactly the change: an edit, an addition, a deletion, a binary file and a symlink retargeted', async () => {
    await tool('write_file', { path: 'a.txt', content: 'one\nthree\n' });
    await tool('apply_patch', { patch: '*** Begin Patch\n*** Delete File: del.txt\n*** End Patch\n' });
    await bash("ln -sfn keep.txt link && printf '\\000\\011' > bin.dat && echo new > added.txt");
    const answer = await call('GET', `/diff?from=${first}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(diffSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body.diff).toBe(
      [
        'diff --git a/a.txt b/a.txt',
        '--- a/a.txt',
        '+++ b/a.txt',
        '@@ -1,2 +1,2 @@',
        ' one',
        '-two',
        '+three',
        'diff --git a/added.txt b/added.txt',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/added.txt',
        '@@ -0,0 +1,1 @@',
        '+new',
        'diff --git a/bin.dat b/bin.dat',
        'Binary files a/bin.dat and b/bin.dat differ',
        'diff --git a/del.txt b/del.txt',
        'deleted file mode 100644',
        '--- a/del.txt',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-gone',
        'diff --git a/link b/link',
        '--- a/link',
        '+++ b/link',
        '@@ -1,1 +1,1 @@',
        '-a.txt',
        '\\ No newline at end of file',
        '+keep.txt',
        '\\ No newline at end of file',
        '',
      ].join('\n'),
    );
  });

  it('lists checkpoints newest first', async () => {
    const second = await call('POST', '/checkpoints');
    expect(second.status).toBe(201);
    const answer = await call('GET', '/checkpoints');
    expect(answer.status).toBe(200);
    expect(checkpointListSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body.checkpoints.map((row: { id: string; message: string }) => [row.id, row.message])).toEqual([
      [second.body.id, 'checkpoint'],
      [first, 'first'],
    ]);
    expect((await call('GET', `/diff?from=${second.body.id}`)).body.diff).toBe('');
    // Between two checkpoints: the second holds what the workspace holds now, so the diff from the
    // first to it is the diff from the first to now; the other way round it undoes the change.
    const toNow = (await call('GET', `/diff?from=${first}`)).body.diff;
    const between = await call('GET', `/diff?from=${first}&to=${second.body.id}`);
    expect(between.status).toBe(200);
    expect(between.body.diff).toBe(toNow);
    const back = (await call('GET', `/diff?from=${second.body.id}&to=${first}`)).body.diff as string;
    expect(back).toContain('diff --git a/a.txt b/a.txt');
    expect(back).toContain('deleted file mode 100644');
    expect((await call('GET', `/diff?from=${first}&to=${first}`)).body.diff).toBe('');
    expect(await call('GET', `/diff?from=${first}&to=${'e'.repeat(40)}`)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });

  it('restores the checkpoint byte for byte, symlinks included, in one workspace commit', async () => {
    const before = (await server.call('GET', `/v1/workspaces/${ws}`)).body.version;
    const answer = await call('POST', '/restore', { checkpoint: first });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(restoreSchema.safeParse(answer.body).success).toBe(true);
    expect(answer.body).toEqual({ restored: first, version: before + 1 });
    expect(await observe()).toEqual(saved);
    expect(await read('a.txt')).toBe('one\ntwo\n');
    expect(await read('del.txt')).toBe('gone\n');
    expect(await read('link')).toBe('one\ntwo\n');
    expect(await bash('od -An -tx1 bin.dat; readlink link; test ! -e added.txt && echo no-added')).toBe(
      ' 00 01 02 ff\na.txt\nno-added\n',
    );
    expect((await call('GET', `/diff?from=${first}`)).body.diff).toBe('');
  });

  it('answers not_found for an unknown checkpoint or workspace, invalid_argument for a malformed id', async () => {
    const unknown = 'f'.repeat(40);
    expect(await call('GET', `/diff?from=${unknown}`)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect(await call('POST', '/restore', { checkpoint: unknown })).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect(await call('GET', '/diff?from=HEAD')).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await call('GET', '/diff')).toMatchObject({ status: 400, body: { error: { code: 'invalid_argument' } } });
    expect(await call('POST', '/restore', { checkpoint: first, extra: 1 })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await server.call('POST', '/v1/workspaces/never-made/checkpoints')).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    // A checkpoint of one workspace is unknown in another.
    await server.call('PUT', '/v1/workspaces/hist-other');
    expect(await server.call('GET', `/v1/workspaces/hist-other/diff?from=${first}`)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });

  it('lets agent keys checkpoint, list and diff; restore needs writes without approval', async () => {
    const agent = await createKey(server, { role: 'agent', workspaces: [ws] });
    const made = await agent.call('POST', `/v1/workspaces/${ws}/checkpoints`, { message: 'by agent' });
    expect(made.status).toBe(201);
    expect((await agent.call('GET', `/v1/workspaces/${ws}/checkpoints`)).status).toBe(200);
    expect((await agent.call('GET', `/v1/workspaces/${ws}/diff?from=${first}`)).status).toBe(200);
    expect(await agent.call('POST', `/v1/workspaces/${ws}/restore`, { checkpoint: first })).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden' } },
    });
    const trusted = await createKey(server, { role: 'agent', workspaces: [ws], approvalMode: 'auto' });
    expect((await trusted.call('POST', `/v1/workspaces/${ws}/restore`, { checkpoint: made.body.id })).status).toBe(200);
    const outsider = await createKey(server, { role: 'agent', workspaces: ['elsewhere'] });
    expect(await outsider.call('GET', `/v1/workspaces/${ws}/checkpoints`)).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
  });
});

describe('automatic checkpoint after apply_patch', () => {
  const patch = (name: string) => `*** Begin Patch\n*** Add File: ${name}\n+hello\n*** End Patch\n`;

  it('checkpoints after each successful apply_patch where the workspace asks for it, and never for a dry run or a failure', async () => {
    expect((await server.call('PUT', '/v1/workspaces/auto', { autoCheckpoint: true })).status).toBe(201);
    expect((await tool('apply_patch', { patch: patch('one.txt') }, 'auto')).status).toBe(200);
    expect((await tool('apply_patch', { patch: patch('dry.txt'), dryRun: true }, 'auto')).status).toBe(200);
    expect(
      (await tool('apply_patch', { patch: '*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n' }, 'auto'))
        .status,
    ).toBe(404);
    expect((await tool('write_file', { path: 'w.txt', content: 'w' }, 'auto')).status).toBe(200);
    const listed = (await server.call('GET', '/v1/workspaces/auto/checkpoints')).body.checkpoints;
    expect(listed.map((row: { message: string }) => row.message)).toEqual(['apply_patch\n\nA one.txt']);
    // It holds exactly the state right after the patch: only w.txt came later.
    const diff = (await server.call('GET', `/v1/workspaces/auto/diff?from=${listed[0].id}`)).body.diff;
    expect(diff).toBe(
      'diff --git a/w.txt b/w.txt\nnew file mode 100644\n--- /dev/null\n+++ b/w.txt\n@@ -0,0 +1,1 @@\n+w\n\\ No newline at end of file\n',
    );
  });

  it('is off unless set, and a later PUT turns it off without touching the other settings', async () => {
    expect((await server.call('PUT', '/v1/workspaces/manual', { excludedPaths: ['target'] })).status).toBe(201);
    await tool('apply_patch', { patch: patch('a.txt') }, 'manual');
    expect((await server.call('GET', '/v1/workspaces/manual/checkpoints')).body.checkpoints).toEqual([]);
    expect((await server.call('PUT', '/v1/workspaces/manual', { autoCheckpoint: true })).status).toBe(200);
    await tool('apply_patch', { patch: patch('b.txt') }, 'manual');
    expect((await server.call('GET', '/v1/workspaces/manual/checkpoints')).body.checkpoints).toHaveLength(1);
    expect((await tool('write_file', { path: 'target/x', content: 'x' }, 'manual')).body.error.code).toBe(
      'path_denied',
    );
    expect((await server.call('PUT', '/v1/workspaces/manual', { autoCheckpoint: false })).status).toBe(200);
    await tool('apply_patch', { patch: patch('c.txt') }, 'manual');
    expect((await server.call('GET', '/v1/workspaces/manual/checkpoints')).body.checkpoints).toHaveLength(1);
  });
});

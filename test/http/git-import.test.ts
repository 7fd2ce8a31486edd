// docs/api.md History, import: a real repository made with the git CLI and served from loopback by git http-backend,
// imported over smart HTTP into an empty workspace; limits, auth failures and a non-empty workspace refused.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileHashes } from '../support/file-hashes.ts';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http-server.ts';
import { useServer } from '../support/server-process.ts';

const FILES = 1000;
// The git server runs on loopback, which the egress rule refuses unless it is listed.
const server = useServer({
  env: {
    TOOLGATE_IMPORT_MAX_FILES: '1010',
    TOOLGATE_IMPORT_MAX_BYTES: '200000',
    TOOLGATE_EGRESS_ALLOW_HOSTS: '127.0.0.1',
  },
});
const root = mkdtempSync(join(tmpdir(), 'toolgate-git-'));
let open: GitHttpServer;
let guarded: GitHttpServer;

/** The files of the main repository, by path, as the import must reproduce them. */
const expected = new Map<string, string>();

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
}

/** Makes `<root>/<name>.git` (bare) from the files `fill` writes into a work tree, in two commits so depth matters. */
function makeRepository(name: string, fill: (dir: string) => void): void {
  const work = join(root, `${name}-work`);
  mkdirSync(work);
  git(work, 'init', '-q', '-b', 'main');
  writeFileSync(join(work, 'old.txt'), 'only in the first commit\n');
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'first');
  rmSync(join(work, 'old.txt'));
  fill(work);
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'second');
  git(root, 'clone', '-q', '--bare', work, join(root, `${name}.git`));
}

function put(dir: string, path: string, content: string | Buffer): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true });
  writeFileSync(join(dir, path), content);
  if (typeof content === 'string') expected.set(path, content);
}

beforeAll(async () => {
  makeRepository('project', (dir) => {
    for (let i = 0; i < FILES; i += 1) put(dir, `files/d${i % 10}/f${i}.txt`, `file ${i}\n`);
    put(dir, 'nested/a/b/c/deep.txt', 'deep\n');
    put(dir, 'tool.sh', '#!/bin/sh\necho hi\n');
    chmodSync(join(dir, 'tool.sh'), 0o755);
    symlinkSync('nested/a/b/c/deep.txt', join(dir, 'link'));
    symlinkSync('../../outside', join(dir, 'escape'));
    mkdirSync(join(dir, '.ssh'));
    writeFileSync(join(dir, '.ssh/config'), 'Host *\n');
  });
  makeRepository('many', (dir) => {
    for (let i = 0; i < 1020; i += 1) writeFileSync(join(dir, `f${i}.txt`), `${i}\n`);
  });
  makeRepository('big', (dir) => writeFileSync(join(dir, 'noise.bin'), randomBytes(300_000)));
  open = await startGitHttpServer({ root });
  guarded = await startGitHttpServer({ root, basicAuth: 'alice:s3cret' });
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  rmSync(root, { recursive: true, force: true });
});

const importInto = (ws: string, git: Record<string, unknown>) =>
  server.call('POST', `/v1/workspaces/${ws}/import`, { git });
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('POST /v1/workspaces/{ws}/import', () => {
  it('fills an empty workspace with a repository of 1,000 files: every content, the symlinks, then checkpoints it', async () => {
    await server.call('PUT', '/v1/workspaces/imported');
    const url = `${open.url}/project.git`;
    const answer = await importInto('imported', { url });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toMatchObject({ url, ref: 'main', files: FILES + 2, symlinks: 2 });
    expect(answer.body.commit).toBe(git(join(root, 'project.git'), 'rev-parse', 'main').trim());
    expect(answer.body.skipped).toEqual([{ path: '.ssh/config', reason: expect.stringContaining('.ssh') }]);

    const listing = await server.call('GET', '/v1/workspaces/imported/files?recursive=true');
    // Every file's bytes, and nothing else.
    expect(Object.fromEntries(await fileHashes(server, 'imported'))).toEqual(
      Object.fromEntries([...expected].map(([path, content]) => [path, sha256(content)])),
    );
    const after = await server.call('GET', '/v1/workspaces/imported/files?recursive=true');
    expect(after.body.entries).toEqual(listing.body.entries);
    const links = listing.body.entries.filter((entry: { type: string }) => entry.type === 'symlink');
    expect(links.map((entry: { path: string; target: string }) => [entry.path, entry.target])).toEqual([
      ['escape', '../../outside'],
      ['link', 'nested/a/b/c/deep.txt'],
    ]);
    const read = (path: string) => server.call('POST', '/v1/workspaces/imported/tools/read_file', { path });
    expect((await read('link')).body.result.content).toBe('deep\n');
    expect((await read('files/d7/f997.txt')).body.result.content).toBe('file 997\n');
    // A link that leaves the workspace is kept, and the path guard refuses it on use.
    expect((await read('escape')).body.error.code).toBe('path_outside_workspace');
    expect((await read('old.txt')).status).toBe(404);

    const checkpoints = (await server.call('GET', '/v1/workspaces/imported/checkpoints')).body.checkpoints;
    expect(checkpoints).toEqual([
      { id: answer.body.checkpoint.id, message: `import ${url}@main`, createdAt: answer.body.checkpoint.createdAt },
    ]);
    expect((await server.call('GET', `/v1/workspaces/imported/diff?from=${answer.body.checkpoint.id}`)).body.diff).toBe(
      '',
    );

    // Now the workspace is not empty: a second import is refused.
    expect(await importInto('imported', { url })).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
  });

  it('imports a named ref with a deeper history when asked', async () => {
    await server.call('PUT', '/v1/workspaces/named');
    const named = await importInto('named', { url: `${open.url}/project.git`, ref: 'main', depth: 2 });
    expect(named.status, JSON.stringify(named.body)).toBe(201);
    expect(named.body.files).toBe(FILES + 2);
  });

  it('refuses a repository over a limit with 413 naming it, and leaves the workspace empty', async () => {
    await server.call('PUT', '/v1/workspaces/limited');
    const many = await importInto('limited', { url: `${open.url}/many.git` });
    expect(many).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', details: { limit: 'TOOLGATE_IMPORT_MAX_FILES' } } },
    });
    expect(many.body.error.message).toContain('TOOLGATE_IMPORT_MAX_FILES');
    const big = await importInto('limited', { url: `${open.url}/big.git` });
    expect(big).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', details: { limit: 'TOOLGATE_IMPORT_MAX_BYTES' } } },
    });
    expect((await server.call('GET', '/v1/workspaces/limited/files?recursive=true')).body.entries).toEqual([]);
    expect((await server.call('GET', '/v1/workspaces/limited/checkpoints')).body.checkpoints).toEqual([]);
  });

  it('says clearly when the remote refuses access, naming the URL without credentials', async () => {
    await server.call('PUT', '/v1/workspaces/private');
    const url = `${guarded.url}/project.git`;
    const refused = await importInto('private', { url });
    expect(refused).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden', details: { url, remoteStatus: 401 } } },
    });
    expect(refused.body.error.message).toContain(url);
    const wrong = await importInto('private', { url: url.replace('http://', 'http://alice:wrong@') });
    expect(wrong.status).toBe(403);
    expect(JSON.stringify(wrong.body)).not.toContain('wrong');
    const allowed = await importInto('private', { url: url.replace('http://', 'http://alice:s3cret@') });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
    expect(allowed.body.url).toBe(url);
    expect(JSON.stringify((await server.call('GET', '/v1/workspaces/private/checkpoints')).body)).not.toContain(
      's3cret',
    );
  });

  it('refuses other URL schemes, a missing repository or ref, and an unknown workspace', async () => {
    await server.call('PUT', '/v1/workspaces/odd');
    expect(await importInto('odd', { url: 'file:///etc' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await importInto('odd', { url: 'ssh://git@127.0.0.1/x.git' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await importInto('odd', { url: `${open.url}/absent.git` })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await importInto('odd', { url: `${open.url}/project.git`, ref: 'no-such-branch' })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await importInto('odd', { url: `${open.url}/project.git`, extra: true })).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_argument' } },
    });
    expect(await importInto('never-made', { url: `${open.url}/project.git` })).toMatchObject({
      status: 404,
      body: { error: { code: 'not_found' } },
    });
    expect((await server.call('GET', '/v1/workspaces/odd/files?recursive=true')).body.entries).toEqual([]);
  });
});

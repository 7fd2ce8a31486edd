// docs/api.md Workspaces over real HTTP: create/confirm, info, delete, file listings.
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../support/server-process.ts';

const server = useServer();

const write = (ws: string, path: string, content: string) =>
  server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content });

describe('PUT /v1/workspaces/{ws}', () => {
  it('creates (201) then confirms (200) a workspace', async () => {
    const created = await server.call('PUT', '/v1/workspaces/alpha');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'alpha', files: 0, bytes: 0 });
    const confirmed = await server.call('PUT', '/v1/workspaces/alpha');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.createdAt).toBe(created.body.createdAt);
  });

  it('accepts ids matching ^[a-z0-9][a-z0-9_-]{0,62}$ and refuses the rest', async () => {
    for (const id of ['a', '0', 'a-b_c', `a${'b'.repeat(62)}`]) {
      expect((await server.call('PUT', `/v1/workspaces/${id}`)).status).toBe(201);
    }
    for (const id of ['A', '-a', '_a', 'a.b', `a${'b'.repeat(63)}`, 'a%20b', 'caf%C3%A9']) {
      const answer = await server.call('PUT', `/v1/workspaces/${id}`);
      expect({ id, status: answer.status, code: answer.body.error.code }).toEqual({
        id,
        status: 400,
        code: 'invalid_argument',
      });
    }
  });

  it('takes excludedPaths, which then refuse writes by whole segments', async () => {
    expect((await server.call('PUT', '/v1/workspaces/excl', { excludedPaths: ['target', 'build/out'] })).status).toBe(
      201,
    );
    for (const path of ['target', 'target/x.txt', 'build/out/y', '/target/deep/z']) {
      const answer = await write('excl', path, 'x');
      expect({ path, status: answer.status, code: answer.body.error?.code }).toEqual({
        path,
        status: 403,
        code: 'path_denied',
      });
    }
    for (const path of ['targetx/a.txt', 'build/output.txt', 'src/target.txt']) {
      expect((await write('excl', path, 'x')).status).toBe(200);
    }
  });
});

describe('GET /v1/workspaces/{ws}', () => {
  it('reports id, files, bytes, version and createdAt', async () => {
    await server.call('PUT', '/v1/workspaces/info');
    await write('info', 'a.txt', 'hello');
    await write('info', 'dir/b.txt', 'héllo');
    const answer = await server.call('GET', '/v1/workspaces/info');
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body).sort()).toEqual(['bytes', 'createdAt', 'files', 'id', 'version']);
    expect(answer.body).toMatchObject({ id: 'info', files: 2, bytes: 5 + 6 });
    expect(new Date(answer.body.createdAt).toISOString()).toBe(answer.body.createdAt);
    await write('info', 'a.txt', 'hi');
    const after = await server.call('GET', '/v1/workspaces/info');
    expect(after.body).toMatchObject({ files: 2, bytes: 2 + 6 });
    expect(after.body.version).not.toEqual(answer.body.version);
  });

  it('is not_found for a workspace never created', async () => {
    const answer = await server.call('GET', '/v1/workspaces/never');
    expect(answer).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});

describe('DELETE /v1/workspaces/{ws}', () => {
  it('answers 204 and its files are gone, also when created again', async () => {
    await server.call('PUT', '/v1/workspaces/doomed');
    await write('doomed', 'keep.txt', 'data');
    const deleted = await server.call('DELETE', '/v1/workspaces/doomed');
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expect((await server.call('GET', '/v1/workspaces/doomed')).status).toBe(404);
    const call = await server.call('POST', '/v1/workspaces/doomed/tools/read_file', { path: 'keep.txt' });
    expect(call).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    expect((await server.call('PUT', '/v1/workspaces/doomed')).status).toBe(201);
    expect((await server.call('GET', '/v1/workspaces/doomed/files?recursive=true')).body.entries).toEqual([]);
    expect((await server.call('POST', '/v1/workspaces/doomed/tools/read_file', { path: 'keep.txt' })).status).toBe(404);
    expect((await server.call('DELETE', '/v1/workspaces/never-made')).status).toBe(404);
  });
});

describe('GET /v1/workspaces/{ws}/files', () => {
  beforeAll(async () => {
    await server.call('PUT', '/v1/workspaces/tree');
    for (const path of ['README.md', 'src/index.ts', 'src/lib/util.ts', 'src/lib/deep/x.ts', 'srcfile.txt'])
      await write('tree', path, path);
  });

  it('lists direct children of the root by default, directories included', async () => {
    const answer = await server.call('GET', '/v1/workspaces/tree/files');
    expect(answer.status).toBe(200);
    expect(answer.body.entries.map((entry: any) => [entry.path, entry.type])).toEqual([
      ['README.md', 'file'],
      ['src', 'dir'],
      ['srcfile.txt', 'file'],
    ]);
    const readme = answer.body.entries[0];
    expect(readme).toMatchObject({ size: 9 });
    expect(typeof readme.version).toBe('string');
  });

  it('lists a prefix, recursively or not, without sibling names that share its spelling', async () => {
    const direct = await server.call('GET', '/v1/workspaces/tree/files?prefix=src');
    expect(direct.body.entries.map((entry: any) => entry.path)).toEqual(['src/index.ts', 'src/lib']);
    const deep = await server.call('GET', '/v1/workspaces/tree/files?prefix=src/&recursive=true');
    expect(deep.body.entries.map((entry: any) => entry.path)).toEqual([
      'src/index.ts',
      'src/lib',
      'src/lib/deep',
      'src/lib/deep/x.ts',
      'src/lib/util.ts',
    ]);
    const all = await server.call('GET', '/v1/workspaces/tree/files?recursive=true');
    expect(all.body.entries).toHaveLength(8);
  });

  it('reports a missing prefix, a file prefix, a bad flag and an escaping prefix', async () => {
    expect((await server.call('GET', '/v1/workspaces/tree/files?prefix=nope')).body.error.code).toBe('not_found');
    expect((await server.call('GET', '/v1/workspaces/tree/files?prefix=README.md')).body.error.code).toBe(
      'invalid_argument',
    );
    expect((await server.call('GET', '/v1/workspaces/tree/files?recursive=yes')).body.error.code).toBe(
      'invalid_argument',
    );
    const escape = await server.call('GET', '/v1/workspaces/tree/files?prefix=../other');
    expect(escape).toMatchObject({ status: 403, body: { error: { code: 'path_outside_workspace' } } });
  });
});

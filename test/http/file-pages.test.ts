// GET /v1/workspaces/{ws}/files in pages (limit, cursor): every entry exactly once while writes
// happen between pages, bad limits and cursors refused, scope and the guard as for any listing.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { syncWorkspaceChanges } from '../support/runner-sync.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
const WS = 'pages';
const encoder = new TextEncoder();
/** Paths in the order listings give: by their UTF-8 bytes. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

const names = [
  ...Array.from({ length: 60 }, (_, i) => `src/m${i % 6}/file-${String(i).padStart(3, '0')}.ts`),
  ...Array.from({ length: 20 }, (_, i) => `docs/${i}.md`),
  'docs/é-accent.md',
  'docs/日本.md',
  'docs/😀.md',
  'docs/\uFB01.md',
  'a.txt',
  'z.txt',
];

beforeAll(async () => {
  await syncWorkspaceChanges(server, WS, [
    ...names.map((path) => ({ op: 'write' as const, path, bytes: encoder.encode(path) })),
    { op: 'symlink', path: 'link', target: 'src' },
    { op: 'mkdir', path: 'empty' },
  ]);
}, 60_000);

const page = (query: string) => server.call('GET', `/v1/workspaces/${WS}/files?${query}`);
const paths = (answer: { body: any }): string[] => answer.body.entries.map((entry: { path: string }) => entry.path);

async function allPages(query: string, limit: number, between?: (pageNumber: number) => Promise<void>) {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pageNumber = 0; ; pageNumber++) {
    const answer = await page(`${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.entries.length).toBeLessThanOrEqual(limit);
    seen.push(...paths(answer));
    cursor = answer.body.nextCursor;
    if (cursor === undefined) return seen;
    expect(answer.body.entries.length).toBe(limit);
    await between?.(pageNumber);
  }
}

describe('pages of a listing', () => {
  it('put together, are the whole listing in path order, recursive or not', async () => {
    const whole = await page('recursive=true');
    expect(whole.body.nextCursor).toBeUndefined();
    expect(paths(whole)).toEqual([...paths(whole)].sort(byBytes));
    for (const limit of [1, 7, 50]) expect(await allPages('recursive=true', limit)).toEqual(paths(whole));
    const direct = await page('prefix=docs');
    expect(await allPages('prefix=docs', 4)).toEqual(paths(direct));
    expect(await allPages('prefix=src/m1&recursive=true', 3)).toEqual(
      paths(await page('prefix=src/m1&recursive=true')),
    );
    // Through a link, the listing shows the link's paths.
    expect(await allPages('prefix=link', 2)).toEqual(paths(await page('prefix=link')));
  });

  it('give every entry that stays exactly once while files are written and deleted between pages', async () => {
    await syncWorkspaceChanges(
      server,
      'moving',
      names.map((path) => ({ op: 'write', path, bytes: encoder.encode('x') })),
    );
    const before = new Set<string>(paths(await server.call('GET', '/v1/workspaces/moving/files?recursive=true')));
    const deleted = new Set<string>();
    const added = new Set<string>();
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let round = 0; ; round++) {
      const answer = await server.call(
        'GET',
        `/v1/workspaces/moving/files?recursive=true&limit=9${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(answer.status).toBe(200);
      seen.push(...paths(answer));
      cursor = answer.body.nextCursor;
      if (cursor === undefined) break;
      // Between pages: a file is added before and after the cursor, and one file is deleted on each side.
      const early = `a-added-${String(round).padStart(3, '0')}.txt`;
      const late = `zz-added-${String(round).padStart(3, '0')}.txt`;
      for (const path of [early, late]) {
        const written = await server.call('POST', '/v1/workspaces/moving/tools/write_file', { path, content: 'new' });
        expect(written.status).toBe(200);
        added.add(path);
      }
      const unseen = [...before].filter((path) => !seen.includes(path) && !deleted.has(path) && path.endsWith('.md'));
      const gone = [unseen.at(-1), seen.find((path) => path.endsWith('.ts') && !deleted.has(path))];
      for (const path of gone.filter((path): path is string => path !== undefined)) {
        const patch = `*** Begin Patch\n*** Delete File: ${path}\n*** End Patch\n`;
        const answer = await server.call('POST', '/v1/workspaces/moving/tools/apply_patch', { patch });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        deleted.add(path);
      }
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort(byBytes));
    for (const path of before) if (!deleted.has(path)) expect(seen).toContain(path);
    // Files added behind the cursor are not shown; those ahead of it are.
    for (const path of added) expect(seen.includes(path), path).toBe(path.startsWith('zz-'));
    // A file deleted before the listing reached it is not shown.
    for (const path of deleted) if (path.endsWith('.md')) expect(seen).not.toContain(path);
  });
});

describe('refused', () => {
  it.each([
    ...['limit=0', 'limit=10001', 'limit=abc', 'limit=1.5', 'limit=-1', 'cursor=%2B%2B', 'cursor='].map((query) => [
      query,
      query,
    ]),
    ['a cursor of 9,000 characters', `cursor=${'A'.repeat(9000)}`],
  ])('%s as invalid_argument, naming the parameter', async (_, query) => {
    const answer = await page(`recursive=true&${query}`);
    expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_argument']);
    expect(answer.body.error.message).toMatch(/limit|cursor/);
  });

  it('a cursor from another directory, or from below a directory listed without recursive', async () => {
    const first = await page('prefix=docs&limit=2');
    const docsCursor = first.body.nextCursor as string;
    expect((await page(`prefix=docs&limit=2&cursor=${docsCursor}`)).status).toBe(200);
    for (const query of [`prefix=src&cursor=${docsCursor}`, `cursor=${docsCursor}`]) {
      const answer = await page(query);
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_argument']);
    }
    const deep = await page('recursive=true&prefix=src&limit=2');
    expect(paths(deep)[1]).toContain('/');
    // 'src/m0/...' is below src but not one of its direct children.
    const answer = await page(`prefix=src&cursor=${deep.body.nextCursor}`);
    expect([answer.status, answer.body.error?.code]).toEqual([400, 'invalid_argument']);
  });

  it('hostile prefixes with the guard’s codes, and another tenant’s workspace as 404', async () => {
    expect((await page('prefix=../x&limit=5')).body.error.code).toBe('path_outside_workspace');
    const key = await createKey(server, { role: 'agent', workspaces: ['elsewhere'] });
    const answer = await key.call('GET', `/v1/workspaces/${WS}/files?limit=5`);
    expect(answer.status).toBe(404);
    expect(JSON.stringify(answer.body)).not.toContain('docs');
  });
});

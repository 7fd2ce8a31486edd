// grep over HTTP: paging, hostile paths refused by the guard, scope, and arguments refused before any search.
import { beforeAll, describe, expect, it } from 'vitest';
import { syncGrepTree } from '../support/grep-tree.ts';
import { createKey } from '../support/keys.ts';
import { flattenMatches } from '../support/ripgrep-json.ts';
import { syncWorkspaceChanges } from '../support/runner-sync.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
const grep = (args: Record<string, unknown>, ws = 'paged') =>
  server.call('POST', `/v1/workspaces/${ws}/tools/grep`, args);
const code = (answer: { status: number; body: any }) => [answer.status, answer.body?.error?.code];

beforeAll(async () => {
  const many = (name: string) =>
    Array.from({ length: 30 }, (_, i) => (i % 4 === 0 ? `hit ${name} ${i}` : `line ${i}`)).join('\n') + '\n';
  await syncGrepTree(server, 'paged', {
    files: [
      { path: 'a.txt', text: many('a') },
      { path: 'b/c.txt', text: many('c') },
      { path: 'd.txt', text: many('d') },
      { path: 'e.txt', text: 'hit e\n' },
      { path: '.hidden.txt', text: 'secret hit\n' },
    ],
    links: [
      { path: 'escape', target: '../../etc' },
      { path: 'b/out.txt', target: '../../outside.txt' },
    ],
  });
  await server.call('PUT', '/v1/workspaces/other');
}, 60_000);

describe('paging', () => {
  it('pages content matches by offset, and the pages put together are the whole answer', async () => {
    const whole = (await grep({ pattern: 'hit', outputMode: 'content', context: 2 })).body.result;
    expect(whole.truncated).toBe(false);
    expect(whole.files).toBe(4);
    const pages: any[] = [];
    for (let offset = 0; ;) {
      const page = (await grep({ pattern: 'hit', outputMode: 'content', context: 2, maxResults: 7, offset })).body
        .result;
      pages.push(...page.matches);
      expect(page.matches.length).toBeLessThanOrEqual(7);
      expect(page.files).toBe(new Set(page.matches.map((match: any) => match.path)).size);
      if (!page.truncated) {
        expect(page.nextOffset).toBeUndefined();
        break;
      }
      expect(page.nextOffset).toBe(offset + 7);
      offset = page.nextOffset;
    }
    expect(pages).toEqual(whole.matches);
    expect(flattenMatches(pages)).toEqual(flattenMatches(whole.matches));
  });

  it('pages paths and counts by file', async () => {
    const first = (await grep({ pattern: 'hit', maxResults: 2 })).body.result;
    expect(first).toEqual({ paths: ['a.txt', 'b/c.txt'], truncated: true, nextOffset: 2 });
    const rest = (await grep({ pattern: 'hit', maxResults: 2, offset: 2 })).body.result;
    expect(rest).toEqual({ paths: ['d.txt', 'e.txt'], truncated: false });
    const counts = (await grep({ pattern: 'hit', outputMode: 'count', maxResults: 3 })).body.result;
    expect(counts).toEqual({
      counts: [
        { path: 'a.txt', count: 8 },
        { path: 'b/c.txt', count: 8 },
        { path: 'd.txt', count: 8 },
      ],
      truncated: true,
      nextOffset: 3,
    });
  });
});

describe('a search repeated between changes', () => {
  // The walk is remembered per state of the workspace: every kind of change must show in the next call.
  it('sees each write, delete, ignore file and link made since the last search', async () => {
    const ws = 'changing';
    expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    const write = async (path: string, content: string) =>
      expect((await server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content })).status).toBe(200);
    const paths = async () => {
      const answer = await grep({ pattern: 'marker' }, ws);
      expect(answer.status).toBe(200);
      return answer.body.result.paths;
    };
    const files = async (pattern: string) => {
      const answer = await server.call('POST', `/v1/workspaces/${ws}/tools/glob`, { pattern });
      expect(answer.status).toBe(200);
      return answer.body.result.paths;
    };
    await write('src/a.ts', 'marker a\n');
    expect(await paths()).toEqual(['src/a.ts']);
    expect(await files('*.ts')).toEqual(['src/a.ts']);
    await write('src/deep/b.ts', 'marker b\n');
    expect(await paths()).toEqual(['src/a.ts', 'src/deep/b.ts']);
    expect(await files('*.ts')).toEqual(['src/a.ts', 'src/deep/b.ts']);
    await write('src/.gitignore', 'deep/\n');
    expect(await paths()).toEqual(['src/a.ts']);
    await write('src/.gitignore', '# nothing\n');
    expect(await paths()).toEqual(['src/a.ts', 'src/deep/b.ts']);
    const patch = '*** Begin Patch\n*** Delete File: src/a.ts\n*** End Patch\n';
    expect((await server.call('POST', `/v1/workspaces/${ws}/tools/apply_patch`, { patch })).status).toBe(200);
    expect(await paths()).toEqual(['src/deep/b.ts']);
    expect(await files('*.ts')).toEqual(['src/deep/b.ts']);
    await syncWorkspaceChanges(server, ws, [{ op: 'symlink', path: 'lib', target: 'src/deep' }]);
    expect(await paths()).toEqual(['lib/b.ts', 'src/deep/b.ts']);
    expect(await files('*.ts')).toEqual(['lib/b.ts', 'src/deep/b.ts']);
    await server.call('DELETE', `/v1/workspaces/${ws}`);
    expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    expect(await paths()).toEqual([]);
    expect(await files('*.ts')).toEqual([]);
  });
});

describe('security', () => {
  it.each([
    ['../x', 'path_outside_workspace'],
    ['/etc/passwd', 'not_found'],
    ['a\u0000b', 'invalid_argument'],
    ['escape', 'path_outside_workspace'],
    ['b/out.txt', 'path_outside_workspace'],
  ])('refuses path %j with the guard’s code', async (path, expected) => {
    const answer = await grep({ pattern: 'root|hit', path });
    expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe(expected);
  });

  it('never reports what lies behind a link out of the workspace', async () => {
    const answer = await grep({ pattern: '', hidden: true, noIgnore: true });
    expect(answer.status).toBe(200);
    expect(answer.body.result.paths).toEqual(['.hidden.txt', 'a.txt', 'b/c.txt', 'd.txt', 'e.txt']);
  });

  it('answers 404 to a key without the workspace in its scope', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: ['other'] });
    const answer = await key.call('POST', '/v1/workspaces/paged/tools/grep', { pattern: 'hit' });
    expect(answer.status).toBe(404);
    expect(JSON.stringify(answer.body)).not.toContain('hit');
  });

  it('refuses a walk that links make exponential, naming the limit, and the server keeps answering', async () => {
    // Each level links twice to the next: 22 levels stand for 2^22 directories in a 70-entry workspace.
    const levels = 22;
    const changes = Array.from({ length: levels }, (_, level) => [
      { op: 'write' as const, path: `d${level}/f.txt`, bytes: new TextEncoder().encode('x\n') },
      { op: 'symlink' as const, path: `d${level}/a`, target: `../d${level + 1}` },
      { op: 'symlink' as const, path: `d${level}/b`, target: `../d${level + 1}` },
    ]).flat();
    await syncWorkspaceChanges(server, 'links-galore', changes);
    const [answer, health] = await Promise.all([
      grep({ pattern: 'x', path: 'd0' }, 'links-galore'),
      fetch(`${server.url}/healthz`),
    ]);
    expect(code(answer)).toEqual([400, 'invalid_argument']);
    expect(answer.body.error.message).toContain('search a narrower path');
    expect(answer.body.error.details.limit).toBe(1_000_000);
    expect(health.status).toBe(200);
    // A path below the fan-out is searched.
    const narrow = await grep({ pattern: 'x', path: 'd18' }, 'links-galore');
    expect(narrow.status).toBe(200);
    expect(narrow.body.result.paths).toContain('d18/f.txt');
  }, 60_000);

  it('refuses a pattern over 10,000 characters as invalid_argument', async () => {
    expect(code(await grep({ pattern: 'x'.repeat(10_001) }))).toEqual([400, 'invalid_argument']);
  });

  it.each([
    [{ pattern: 42 }],
    [{ pattern: 'a', maxResults: 0 }],
    [{ pattern: 'a', maxResults: 10_001 }],
    [{ pattern: 'a', context: -1 }],
    [{ pattern: 'a', outputMode: 'lines' }],
    [{ pattern: 'a', caseInsensitive: 'yes' }],
    [{ pattern: 'a', unknown: true }],
    [{ pattern: 'a(' }],
  ])('refuses %j as invalid_argument', async (args) => {
    expect(code(await grep(args))).toEqual([400, 'invalid_argument']);
  });
});

describe('patterns that would hold a backtracking engine', () => {
  it('answers (a+)+$ over 100 KB lines of a with the right line, and the server keeps answering', async () => {
    const run = 'a'.repeat(100_000);
    for (const [path, content] of [
      ['long/ends-in-a.txt', `${run}\n`],
      ['long/ends-in-b.txt', `${run}b\n`],
    ]) {
      const written = await server.call('POST', '/v1/workspaces/paged/tools/write_file', { path, content });
      expect(written.status).toBe(200);
    }
    const [answer, health] = await Promise.all([
      grep({ pattern: '(a+)+$', path: 'long', outputMode: 'count' }),
      fetch(`${server.url}/healthz`),
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body.result.counts).toEqual([{ path: 'long/ends-in-a.txt', count: 1 }]);
    expect(health.status).toBe(200);
    const nested = await grep({ pattern: '(x*)*(y*)*(a|aa)+$', path: 'long', outputMode: 'files_with_matches' });
    expect(nested.body.result.paths).toEqual(['long/ends-in-a.txt']);
  });
});

describe('a file with a very long line', () => {
  // Past a mebibyte, one re2js call over the line would hold the event loop: the Node home searches
  // such a file on a thread, the Cloudflare home in the workspace's own object. The answer is the
  // one a file of short lines gives, the reported line being cut at 2,000 characters either way.
  const ws = 'long-line';
  const file = (line: string) => `first line\n${line}\nab x9y last\n`;
  const grepIn = (path: string, args: Record<string, unknown>) => grep({ ...args, path }, ws);
  /** The answer with its paths named for the search, so the long and the short file's compare. */
  const answerOf = async (path: string, args: Record<string, unknown>) =>
    JSON.parse(JSON.stringify((await grepIn(path, args)).body).replaceAll(`${path}/`, 'dir/'));

  beforeAll(async () => {
    expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBeLessThan(300);
    // 3 MB of `ab` then `x1234y` at the end of the line; the short file's line is the same but 3 KB long.
    for (const [path, line] of [
      ['long/f.txt', `${'ab'.repeat(1_500_000)}x1234y`],
      ['short/f.txt', `${'ab'.repeat(1_500)}x1234y`],
    ] as const) {
      const written = await server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, {
        path,
        content: file(line),
      });
      expect(written.status).toBe(200);
    }
  }, 60_000);

  it.each([
    { pattern: 'x[0-9]+y', outputMode: 'content', context: 1 },
    { pattern: 'a(b|c)x1', outputMode: 'content' },
    { pattern: '[0-9]{4}y$', outputMode: 'count' },
    { pattern: 'X1234Y', caseInsensitive: true, outputMode: 'content', before: 1 },
    { pattern: 'x1234y', fixedStrings: true },
    { pattern: 'y\\nab x', multiline: true, outputMode: 'content' },
    { pattern: 'b[0-9]+y' },
  ])('answers %j as for a short line', async (args) => {
    const [long, health] = await Promise.all([answerOf('long', args), fetch(`${server.url}/healthz`)]);
    expect(health.status).toBe(200);
    expect(long).toEqual(await answerOf('short', args));
  });

  it('finds the match at the end of the line, with its number and context', async () => {
    const answer = (await grepIn('long', { pattern: 'x[0-9]+y', outputMode: 'content', context: 1 })).body.result;
    expect(answer).toEqual({
      matches: [
        { path: 'long/f.txt', line: 2, text: 'ab'.repeat(1_000), before: ['first line'] },
        { path: 'long/f.txt', line: 3, text: 'ab x9y last' },
      ],
      files: 1,
      truncated: false,
    });
    const counts = (await grepIn('long', { pattern: 'b(a|c)?x[0-9]{4}', outputMode: 'count' })).body.result;
    expect(counts).toEqual({ counts: [{ path: 'long/f.txt', count: 1 }], truncated: false });
  });
});

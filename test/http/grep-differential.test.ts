// grep over HTTP against ripgrep itself: one generated tree on disk for `rg --json` and synced into a
// workspace, then every case's paths, line numbers and texts compared; divergences asserted as such.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchTree, syncGrepTree, writeGrepTreeToDisk } from '../support/grep-tree.ts';
import { flattenMatches, runRg, type GrepArgs, type RgAnswer } from '../support/ripgrep-json.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
const WS = 'grepped';
let base: string;
const root = () => join(base, 'root');
const home = () => join(base, 'home');

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'toolgate-grep-'));
  mkdirSync(root());
  mkdirSync(home());
  const tree = searchTree();
  writeGrepTreeToDisk(tree, root());
  await syncGrepTree(server, WS, tree);
}, 60_000);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const PATTERNS = [
  'TODO',
  'function',
  'return',
  'const \\w+ =',
  '\\d{3,}',
  '^\\s*#',
  '^$',
  'foo|bar',
  '[A-Z][a-z]+Error',
  'λόγος',
  'привет',
  '日本',
  '😀',
  'é',
  'colou?r',
  'x{2,}',
  '^[^a-z]*$',
  '\\.',
  'a.c',
  '[[:digit:]]+',
  '\\p{Greek}+',
  'end$',
  '\\r$',
  ';$',
  '^\\t',
  '"[^"]*"',
  'fn\\s+\\w+\\(',
  'def |class ',
  '<[a-z]+>',
  'NEEDLE',
  'http://',
  '\\$\\{',
  '(a|b)+c',
  '[0-9a-f]{8}',
  '^.{0,3}$',
  'z{100}',
  'tail$',
  '(?i)hello',
  '\\w+',
  '\\S+\\s\\S+',
  'Straße',
  '\\x{212A}',
  '[^\\x00-\\x7F]',
  '^(?:hit|line) \\d+$',
  'hit 1\\d',
];
const FOLDED = ['hello', 'straße', 'σίσυφος', 'kelvin k', 'LONG S', 'привет', 'todo', 'error', 'É', 'k'];
const FIXED = ['a.c', 'a+c', '(a)', '[b]', '{c}', 'a|b', '${name}', 'back\\slash', '.*', '^end$', ''];
const MULTILINE = [
  'TODO.*\\n.*return',
  '\\{\\n\\s+',
  'end\\r?\\n',
  '(?s)function.{0,40}return',
  'class \\w+:\\n',
  '^\\n',
  'hit \\d+\\nline',
  '\\n\\n',
  'x$\\n^y',
];

type Case = GrepArgs;
const key = (args: GrepArgs) => JSON.stringify(args);
const modes = ['content', 'files_with_matches', 'count'] as const;
const cases: Case[] = [
  ...PATTERNS.flatMap((pattern) => modes.map((outputMode) => ({ pattern, outputMode }))),
  ...FOLDED.flatMap((pattern) => [
    { pattern, caseInsensitive: true, outputMode: 'content' as const },
    { pattern, caseInsensitive: true, fixedStrings: true, outputMode: 'count' as const },
  ]),
  ...FIXED.flatMap((pattern) => [
    { pattern, fixedStrings: true, outputMode: 'content' as const },
    { pattern, fixedStrings: true },
  ]),
  ...MULTILINE.flatMap((pattern) => [
    { pattern, multiline: true, outputMode: 'content' as const },
    { pattern, multiline: true, outputMode: 'count' as const },
  ]),
  ...[
    { after: 2 },
    { before: 2 },
    { context: 1 },
    { context: 3 },
    { before: 1, after: 4 },
    { before: 5, after: 1 },
    { context: 10 },
    { context: 2, after: 0 },
  ].flatMap((window) =>
    ['hit', 'TODO', 'return', '^$', 'line 1\\d'].map((pattern) => ({
      pattern,
      outputMode: 'content' as const,
      ...window,
    })),
  ),
  ...[
    { pattern: 'hit \\d+\\nline', multiline: true, context: 2 },
    { pattern: 'TODO', multiline: true, after: 1 },
  ].map((extra) => ({ ...extra, outputMode: 'content' as const })),
  ...['*.ts', '*.{md,txt}', 'src/**', '!*.ts', 'docs/*', '**/lib/*', '*.log', '[ab]*'].flatMap((glob) => [
    { pattern: 'TODO', glob },
    { pattern: 'e', glob, outputMode: 'count' as const },
  ]),
  ...['ts', 'py', 'rust', 'go', 'md', 'json', 'c', 'java', 'sh', 'yaml', 'css', 'html', 'js', 'txt'].map((type) => ({
    pattern: 'e',
    type,
    outputMode: 'count' as const,
  })),
  ...[{ hidden: true }, { noIgnore: true }, { hidden: true, noIgnore: true }].flatMap((flags) => [
    { pattern: 'TODO', ...flags },
    { pattern: 'needle', caseInsensitive: true, outputMode: 'content' as const, ...flags },
  ]),
  ...[
    'src',
    'src/lib',
    'docs',
    'tests',
    'notes',
    'src/lib-link',
    'unicode.txt',
    'docs/unicode-link.txt',
    'bin',
  ].flatMap((path) => [
    { pattern: 'TODO', path },
    { pattern: 'e', path, outputMode: 'content' as const, context: 1 },
  ]),
  { pattern: 'TODO', path: 'bin/data.bin' },
  { pattern: '\\bber', outputMode: 'content' },
  { pattern: 'caf.', outputMode: 'content' },
];

/** latin1.txt is not UTF-8: grep reads its byte 0xE9 as U+FFFD, a character; rg's classes match no invalid byte. */
const INVALID_UTF8 =
  'invalid UTF-8 reads as U+FFFD, which \\S and [^\\x00-\\x7F] match, where rg matches no invalid byte (latin1.txt)';

/** Where grep and rg answer differently on purpose, and why; asserted different so a fix is noticed. */
const DIVERGENCES: Record<string, string> = {
  [key({ pattern: '\\bber', outputMode: 'content' })]:
    "RE2's \\b is ASCII: it sees a word boundary between ü and b in 'über', where rg's Unicode \\b sees none",
  [key({ pattern: 'caf.', outputMode: 'content' })]: INVALID_UTF8,
  [key({ pattern: 'TODO', path: 'bin/data.bin' })]:
    'rg searches a binary file named outright (up to its NUL), grep skips a binary file wherever it is',
  ...Object.fromEntries(
    ['\\S+\\s\\S+', '[^\\x00-\\x7F]'].flatMap((pattern) =>
      modes.map((outputMode) => [key({ pattern, outputMode }), INVALID_UTF8]),
    ),
  ),
};

const grep = (args: Record<string, unknown>) => server.call('POST', `/v1/workspaces/${WS}/tools/grep`, args);

/** grep's answer in the shape of rg's: paths, counts or the flattened lines, by the case's mode. */
async function grepAnswer(args: GrepArgs): Promise<Partial<RgAnswer>> {
  const answer = await grep({ maxResults: 10_000, ...args });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const result = answer.body.result;
  expect(result.truncated).toBe(false);
  if (args.outputMode === 'content') return { lines: flattenMatches(result.matches) };
  if (args.outputMode === 'count') return { counts: result.counts };
  return { paths: result.paths };
}

function rgAnswer(args: GrepArgs): Partial<RgAnswer> {
  const rg = runRg(root(), home(), args);
  if (args.outputMode === 'content') return { lines: rg.lines };
  if (args.outputMode === 'count') return { counts: rg.counts };
  return { paths: rg.paths };
}

describe('grep against rg', () => {
  it('has 200 cases or more', () => {
    expect(cases.length).toBeGreaterThanOrEqual(200);
  });

  it.each(cases.map((args) => [key(args), args] as const))('%s', async (_name, args) => {
    const ours = await grepAnswer(args);
    const theirs = rgAnswer(args);
    const divergence = DIVERGENCES[key(args)];
    if (divergence === undefined) expect(ours).toEqual(theirs);
    else expect(ours, divergence).not.toEqual(theirs);
  });
});

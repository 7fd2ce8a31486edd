// ripgrep itself for grep's differential test: run `rg --json` and read its events into grep's answer shapes.
import { spawnSync } from 'node:child_process';
import { cutAtChars } from '../../src/core/text-lines.ts';

/** grep's arguments that have an rg flag. */
export interface GrepArgs {
  pattern: string;
  path?: string;
  glob?: string;
  type?: string;
  caseInsensitive?: boolean;
  fixedStrings?: boolean;
  multiline?: boolean;
  outputMode?: 'content' | 'files_with_matches' | 'count';
  before?: number;
  after?: number;
  context?: number;
  hidden?: boolean;
  noIgnore?: boolean;
}

/** One line of output in order: what rg prints, and what grep's matches give when flattened. */
export type OutputLine = [path: string, line: number, kind: 'match' | 'context', text: string];

export interface RgAnswer {
  /** Files with a match, in rg's order. */
  paths: string[];
  /** Matching lines per file (rg's matched_lines). */
  counts: Array<{ path: string; count: number }>;
  /** Matches and context lines in order, lines cut as grep cuts them. */
  lines: OutputLine[];
}

export const MAX_LINE_CHARS = 2_000;

export function rgFlags(args: GrepArgs): string[] {
  return [
    ...(args.caseInsensitive ? ['-i'] : []),
    ...(args.fixedStrings ? ['-F'] : []),
    ...(args.multiline ? ['-U'] : []),
    ...(args.glob === undefined ? [] : ['-g', args.glob]),
    ...(args.type === undefined ? [] : ['-t', args.type]),
    ...(args.hidden ? ['--hidden'] : []),
    ...(args.noIgnore ? ['--no-ignore'] : []),
    ...contextFlags(args),
    '-e',
    args.pattern,
    // Always a path: without one, rg reads its standard input when that is not a terminal.
    args.path === undefined || args.path === '' ? '.' : args.path,
  ];
}

/**
 * -C alone, or both windows spelled out: rg 13 lets the last of -A, -B and -C override the others
 * whole (`-C 2 -A 0` shows no context at all), where grep's `context` fills only the side not given.
 */
function contextFlags(args: GrepArgs): string[] {
  if (args.before === undefined && args.after === undefined) {
    return args.context === undefined ? [] : ['-C', String(args.context)];
  }
  const before = args.before ?? args.context;
  const after = args.after ?? args.context;
  return [
    ...(before === undefined ? [] : ['-B', String(before)]),
    ...(after === undefined ? [] : ['-A', String(after)]),
  ];
}

const utf8 = new TextDecoder('utf-8');

/** rg's text or bytes (lines that are not UTF-8), decoded as grep decodes them. */
function textOf(data: { text?: string; bytes?: string }): string {
  return data.text ?? utf8.decode(Buffer.from(data.bytes ?? '', 'base64'));
}

/** `rg --json --sort path --no-require-git -L` in `root` with HOME an empty directory (no global ignore rules). */
export function runRg(root: string, home: string, args: GrepArgs): RgAnswer {
  const run = spawnSync('rg', ['--json', '--sort', 'path', '--no-require-git', '--no-config', '-L', ...rgFlags(args)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: home },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error) throw new Error(`ripgrep (rg) could not run (${run.error.message}): install the ripgrep package`);
  if (run.status === 2) throw new Error(`rg refused ${JSON.stringify(args)}: ${run.stderr}`);
  const answer: RgAnswer = { paths: [], counts: [], lines: [] };
  for (const raw of run.stdout.split('\n')) {
    if (raw === '') continue;
    const event = JSON.parse(raw) as { type: 'match' | 'context' | 'end' | 'begin' | 'summary'; data: any };
    if (event.type !== 'match' && event.type !== 'context' && event.type !== 'end') continue;
    const path = textOf(event.data.path).replace(/^\.\//, '');
    if (event.type === 'end') {
      if (event.data.stats.matched_lines > 0) {
        answer.paths.push(path);
        answer.counts.push({ path, count: event.data.stats.matched_lines });
      }
      continue;
    }
    const kind = event.type;
    // A multiline match is one event of several lines; each is a matching line.
    const lines = textOf(event.data.lines).replace(/\n$/, '').split('\n');
    lines.forEach((text, index) => {
      answer.lines.push([path, event.data.line_number + index, kind, cutAtChars(text, MAX_LINE_CHARS)]);
    });
  }
  return answer;
}

/** grep's content matches flattened into the order rg prints lines: each match's before, itself, its after. */
export function flattenMatches(
  matches: Array<{ path: string; line: number; text: string; before?: string[]; after?: string[] }>,
): OutputLine[] {
  return matches.flatMap((match) => [
    ...(match.before ?? []).map((text, index, all): OutputLine => [
      match.path,
      match.line - all.length + index,
      'context',
      text,
    ]),
    [match.path, match.line, 'match', match.text] as OutputLine,
    ...(match.after ?? []).map((text, index): OutputLine => [match.path, match.line + index + 1, 'context', text]),
  ]);
}

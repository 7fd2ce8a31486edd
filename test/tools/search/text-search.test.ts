// Searching one file's bytes: ripgrep's lines, binary files, context merging, cut lines, multiline and case folding.
import { describe, expect, it } from 'vitest';
import { unlimitedWork } from '../../../src/core/work-budget.ts';
import { compileTextPattern, type PatternOptions } from '../../../src/tools/search/text-pattern.ts';
import {
  LONG_RUN_BYTES,
  MAX_LINE_CHARS,
  runsLong,
  searchFileBytes,
  type LineMatch,
} from '../../../src/tools/search/text-search.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

interface Ask extends PatternOptions {
  before?: number;
  after?: number;
  limit?: number;
}

async function lines(content: string | Uint8Array, pattern: string, ask: Ask = {}): Promise<LineMatch[] | undefined> {
  const bytes = typeof content === 'string' ? utf8(content) : content;
  const found = await searchFileBytes(
    bytes,
    compileTextPattern(pattern, ask),
    { limit: ask.limit ?? Number.POSITIVE_INFINITY, lines: true, before: ask.before ?? 0, after: ask.after ?? 0 },
    unlimitedWork(),
  );
  return found?.matches;
}

/** Numbers and texts only. */
const brief = (matches: LineMatch[] | undefined) => matches?.map((match) => [match.line, match.text]);

/** ripgrep's sequence of (line, kind, text) from our shape: each match's before, itself, its after. */
function flatten(matches: LineMatch[]): Array<[number, string, string]> {
  return matches.flatMap((match) => [
    ...(match.before ?? []).map((text, index, all): [number, string, string] => [
      match.line - all.length + index,
      'context',
      text,
    ]),
    [match.line, 'match', match.text] as [number, string, string],
    ...(match.after ?? []).map((text, index): [number, string, string] => [match.line + index + 1, 'context', text]),
  ]);
}

describe('lines', () => {
  it('numbers lines from 1, with the last line counted without a final line feed', async () => {
    expect(brief(await lines('alpha\nbeta\ngamma', 'a$'))).toEqual([
      [1, 'alpha'],
      [2, 'beta'],
      [3, 'gamma'],
    ]);
    expect(brief(await lines('x\n\ny\n', '^$'))).toEqual([[2, '']]);
    expect(await lines('', '^')).toBeUndefined();
    expect(brief(await lines('a\n', ''))).toEqual([[1, 'a']]);
  });

  it('keeps a carriage return in the text, so $ does not match before it (rg without --crlf)', async () => {
    expect(await lines('foo\r\nbar\r\n', 'foo$')).toBeUndefined();
    expect(brief(await lines('foo\r\nbar\r\n', 'bar'))).toEqual([[2, 'bar\r']]);
    expect(brief(await lines('foo\r\nbar\r\n', 'o\\r$'))).toEqual([[1, 'foo\r']]);
  });

  it('cuts a long line at 2,000 characters without splitting a surrogate pair', async () => {
    const long = 'x'.repeat(MAX_LINE_CHARS - 1) + '😀' + 'tail';
    const [match] = (await lines(`${long}\n`, 'tail'))!;
    expect(match!.text).toBe('x'.repeat(MAX_LINE_CHARS - 1));
  });

  it('drops a byte order mark and reads invalid UTF-8 as U+FFFD', async () => {
    expect(brief(await lines(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]), '^hi'))).toEqual([[1, 'hi']]);
    expect(brief(await lines(new Uint8Array([0x63, 0xe9, 0x20, 0x6d, 0x0a]), 'm'))).toEqual([[1, 'c\ufffd m']]);
  });
});

describe('binary files', () => {
  it('skips a file with a NUL byte in its first 64 KiB', async () => {
    expect(await lines('match\n\0\n', 'match')).toBeUndefined();
    expect(await lines(`match\n${'y\n'.repeat(30_000)}\0`, 'match')).toBeUndefined();
  });

  it('searches up to the line of a later NUL', async () => {
    const text = `match 1\n${'y\n'.repeat(40_000)}match 2\0\nmatch 3\n`;
    expect(brief(await lines(text, 'match'))).toEqual([[1, 'match 1']]);
  });
});

describe('patterns', () => {
  it('gives \\d, \\w and \\s their Unicode meaning, as ripgrep does', async () => {
    expect(brief(await lines('٣\nx\n', '\\d'))).toEqual([[1, '٣']]);
    expect(brief(await lines('été\n--\n', '^\\w+$'))).toEqual([[1, 'été']]);
    expect(brief(await lines('a\u00a0b\nab\n', 'a\\sb'))).toEqual([[1, 'a\u00a0b']]);
    expect(brief(await lines('ab\n٣\n', '[\\d]'))).toEqual([[2, '٣']]);
  });

  it('folds case as Unicode simple case folding', async () => {
    const text = 'ΣΊΣΥΦΟΣ\nstraße\nKelvin \u212a\n';
    expect(brief(await lines(text, 'σίσυφος', { caseInsensitive: true }))).toEqual([[1, 'ΣΊΣΥΦΟΣ']]);
    expect(brief(await lines(text, 'kelvin k', { caseInsensitive: true }))).toEqual([[3, 'Kelvin \u212a']]);
    expect(
      brief(await lines('TODO x\ntodo\nnothing\n', 'ToDo', { caseInsensitive: true, fixedStrings: true })),
    ).toEqual([
      [1, 'TODO x'],
      [2, 'todo'],
    ]);
  });

  it('matches \\A and \\z at each line, as ripgrep does outside multiline mode', async () => {
    expect(brief(await lines('foo\nbar\n', '\\Abar'))).toEqual([[2, 'bar']]);
    expect(await lines('foo\nbar\n', '\\Abar', { multiline: true })).toBeUndefined();
  });

  it('answers a catastrophic pattern over 100 KB in linear time, with the right lines', async () => {
    const text = `${'a'.repeat(100_000)}\nb\n${'a'.repeat(100_000)}b\n`;
    const found = await lines(text, '(a+)+$');
    expect(found?.map((match) => [match.line, match.text.length])).toEqual([[1, MAX_LINE_CHARS]]);
  });

  it('finds literals with regex metacharacters as text with fixedStrings', async () => {
    expect(brief(await lines('a.b\naxb\n(x)*\n', 'a.b', { fixedStrings: true }))).toEqual([[1, 'a.b']]);
    expect(brief(await lines('a.b\naxb\n(x)*\n', '(x)*', { fixedStrings: true }))).toEqual([[3, '(x)*']]);
  });
});

describe('multiline', () => {
  it('reports each line a match touches, once, searching on from the end of the last match', async () => {
    expect(brief(await lines('one\ntwo\nthree\nfour\n', 'one\\ntwo\\nth|four', { multiline: true }))).toEqual([
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
      [4, 'four'],
    ]);
    expect(brief(await lines('a b\nc\n', 'b\\nc|a', { multiline: true }))).toEqual([
      [1, 'a b'],
      [2, 'c'],
    ]);
    // A match ending with its line feed touches that line only.
    expect(brief(await lines('foo\nbar\n', 'foo\\n', { multiline: true }))).toEqual([[1, 'foo']]);
    // . stops at a line feed unless (?s).
    expect(await lines('a\nb\n', 'a.b', { multiline: true })).toBeUndefined();
    expect(brief(await lines('a\nb\n', '(?s)a.b', { multiline: true }))).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });
});

describe('context', () => {
  const text = Array.from(
    { length: 12 },
    (_, index) => `line ${index + 1}${[3, 5, 11].includes(index + 1) ? ' hit' : ''}`,
  ).join('\n');

  it('attaches each context line once: to the after of the match before it, else the before of the next', async () => {
    const found = (await lines(text, 'hit', { before: 2, after: 2 }))!;
    expect(found).toEqual([
      { line: 3, text: 'line 3 hit', before: ['line 1', 'line 2'], after: ['line 4'] },
      { line: 5, text: 'line 5 hit', after: ['line 6', 'line 7'] },
      { line: 11, text: 'line 11 hit', before: ['line 9', 'line 10'], after: ['line 12'] },
    ]);
    // ripgrep's own sequence, lines 8 being out of every window.
    expect(flatten(found).map(([line, kind]) => `${line}${kind[0]}`)).toEqual([
      '1c',
      '2c',
      '3m',
      '4c',
      '5m',
      '6c',
      '7c',
      '9c',
      '10c',
      '11m',
      '12c',
    ]);
  });

  it('gives a before-window what an after-window leaves', async () => {
    const found = (await lines(text, 'hit', { before: 3, after: 1 }))!;
    expect(flatten(found).map(([line, kind]) => `${line}${kind[0]}`)).toEqual([
      '1c',
      '2c',
      '3m',
      '4c',
      '5m',
      '6c',
      '8c',
      '9c',
      '10c',
      '11m',
      '12c',
    ]);
    expect(found[1]).toEqual({ line: 5, text: 'line 5 hit', after: ['line 6'] });
  });

  it('stops at the limit with the last match keeping its after-window, cut at the next match', async () => {
    expect(await lines(text, 'hit', { after: 3, limit: 1 })).toEqual([
      { line: 3, text: 'line 3 hit', after: ['line 4'] },
    ]);
    expect(await lines(text, 'hit', { after: 3, limit: 2 })).toEqual([
      { line: 3, text: 'line 3 hit', after: ['line 4'] },
      { line: 5, text: 'line 5 hit', after: ['line 6', 'line 7', 'line 8'] },
    ]);
  });
});

describe('files whose search would run long', () => {
  // Searched off the event loop where the home can (SearchThreads): one re2js call over more than LONG_RUN_BYTES.
  const bytesOf = (...lineSizes: number[]) => utf8(lineSizes.map((size) => 'a'.repeat(size)).join('\n'));
  const lines = { multiline: false };

  it('are those with a line longer than LONG_RUN_BYTES, wherever it is', () => {
    expect(runsLong(bytesOf(LONG_RUN_BYTES + 1), lines)).toBe(true);
    expect(runsLong(bytesOf(LONG_RUN_BYTES), lines)).toBe(false);
    expect(runsLong(bytesOf(10, LONG_RUN_BYTES, 3, LONG_RUN_BYTES), lines)).toBe(false);
    expect(runsLong(bytesOf(10, LONG_RUN_BYTES, 3, LONG_RUN_BYTES + 1), lines)).toBe(true);
    expect(runsLong(bytesOf(...Array.from({ length: 40_000 }, () => 79), LONG_RUN_BYTES + 1, 5), lines)).toBe(true);
    expect(runsLong(bytesOf(...Array.from({ length: 40_000 }, () => 79)), lines)).toBe(false);
  });

  it('and, for a multiline pattern, any file larger than LONG_RUN_BYTES', () => {
    expect(runsLong(bytesOf(...Array.from({ length: 40_000 }, () => 79)), { multiline: true })).toBe(true);
    expect(runsLong(bytesOf(1000, 1000), { multiline: true })).toBe(false);
  });
});

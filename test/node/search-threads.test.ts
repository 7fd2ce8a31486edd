// grep's search threads (the Node home's SearchThreads): real worker threads give the answers the
// handler's own search gives, a thread that dies fails only its search, and the event loop turns meanwhile.
import { afterAll, describe, expect, it } from 'vitest';
import { unlimitedWork } from '../../src/core/work-budget.ts';
import { SearchThreadPool } from '../../src/node/search-threads.ts';
import type { CollectOptions } from '../../src/tools/search/text-context.ts';
import { compileTextPattern, type PatternOptions } from '../../src/tools/search/text-pattern.ts';
import { searchFileBytes, type ThreadSearch } from '../../src/tools/search/text-search.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);
const MiB = 1024 * 1024;

/** One line of `size` bytes repeating `ab`, ending in `end`. */
const longLine = (size: number, end: string) => 'ab'.repeat((size - end.length) / 2) + end;

const allLines: CollectOptions = { limit: Number.POSITIVE_INFINITY, lines: true, before: 0, after: 0 };

/** The answer the request handler's own search gives. */
const inHandler = (bytes: Uint8Array, { pattern, flags, options }: ThreadSearch) =>
  searchFileBytes(bytes, compileTextPattern(pattern, flags), options, unlimitedWork());

const pools: SearchThreadPool[] = [];
const pool = (options?: ConstructorParameters<typeof SearchThreadPool>[0]) => {
  const made = new SearchThreadPool({ log: () => {}, ...options });
  pools.push(made);
  return made;
};
afterAll(() => Promise.all(pools.map((each) => each.close())));

describe('answers', () => {
  const file = utf8(
    [
      'first line',
      longLine(2 * MiB, 'x1234y'),
      'Hello there, x9y',
      'end of one',
      'start of two',
      'a.c and abc',
      'last HELLO',
    ].join('\n') + '\n',
  );
  const asks: Array<{ pattern: string; flags?: PatternOptions; options?: Partial<CollectOptions> }> = [
    { pattern: 'x[0-9]+y' },
    { pattern: 'a(b|c)x1' },
    { pattern: '[0-9]{4}y$', options: { before: 1, after: 2 } },
    { pattern: 'a.c', flags: { fixedStrings: true } },
    { pattern: 'hello', flags: { caseInsensitive: true }, options: { before: 2 } },
    { pattern: 'one\\nstart', flags: { multiline: true }, options: { after: 1 } },
    { pattern: 'x[0-9]+y', options: { lines: false } },
    { pattern: 'a', options: { limit: 2, after: 1 } },
    { pattern: 'nowhere[0-9]' },
  ];

  it.each(asks)('gives what the handler gives for $pattern $flags $options', async (ask) => {
    const request: ThreadSearch = {
      pattern: ask.pattern,
      flags: ask.flags ?? {},
      options: { ...allLines, ...ask.options },
    };
    const expected = await inHandler(file, request);
    expect(await pool().search(file, request)).toEqual(expected);
  });

  it('finds the match at the end of a long line, and skips a binary file', async () => {
    const threads = pool();
    const found = await threads.search(file, { pattern: 'x[0-9]+y', flags: {}, options: allLines });
    expect(found?.matches.map((match) => match.line)).toEqual([2, 3]);
    expect(found?.matches[0]!.text).toBe('ab'.repeat(1000));
    const binary = utf8(`\0${longLine(2 * MiB, 'x1y')}`);
    expect(await threads.search(binary, { pattern: 'x1y', flags: {}, options: allLines })).toBeUndefined();
  });

  it('answers searches made at once, one after another on its one thread, each its own', async () => {
    const threads = pool();
    const requests = ['x1234y', 'x9y', 'HELLO', 'two'].map((pattern): ThreadSearch => ({
      pattern,
      flags: {},
      options: allLines,
    }));
    const answers = await Promise.all(requests.map((request) => threads.search(file, request)));
    expect(answers).toEqual(await Promise.all(requests.map((request) => inHandler(file, request))));
    expect(answers.map((answer) => answer?.matches[0]?.line)).toEqual([2, 3, 7, 5]);
  });

  it('leaves the caller its bytes: they are copied to the thread, not moved', async () => {
    const bytes = utf8('one x1y\n');
    await pool().search(bytes.subarray(4), { pattern: 'x1y', flags: {}, options: allLines });
    expect(new TextDecoder().decode(bytes)).toBe('one x1y\n');
  });
});

describe('failures', () => {
  it('passes on the error a search throws, and searches on', async () => {
    const threads = pool();
    await expect(threads.search(utf8('a\n'), { pattern: '(', flags: {}, options: allLines })).rejects.toMatchObject({
      code: 'invalid_argument',
    });
    expect(await threads.search(utf8('a\n'), { pattern: 'a', flags: {}, options: allLines })).toEqual({
      count: 1,
      matches: [{ line: 1, text: 'a' }],
    });
  });

  it('fails the search of a thread that ends with unavailable, and the next search gets a new thread', async () => {
    const logged: string[] = [];
    const threads = pool({
      program: new URL('./ending-search-thread.js', import.meta.url),
      log: (message) => logged.push(message),
    });
    const request: ThreadSearch = { pattern: 'x[0-9]y', flags: {}, options: allLines };
    expect(await threads.search(utf8('x1y\n'), request)).toEqual({ count: 1, matches: [{ line: 1, text: 'x1y' }] });
    const ended = threads.search(utf8('x1y\n'), { ...request, pattern: 'end this thread' });
    const queued = threads.search(utf8('x2y\n'), request);
    await expect(ended).rejects.toMatchObject({ code: 'unavailable' });
    await expect(ended).rejects.toThrow(/retry the call/);
    expect(logged).toEqual(['a search thread stopped']);
    expect(await queued).toEqual({ count: 1, matches: [{ line: 1, text: 'x2y' }] });
    expect(await threads.search(utf8('x3y\n'), request)).toEqual({ count: 1, matches: [{ line: 1, text: 'x3y' }] });
  });

  it('fails what is queued or running when it closes, and refuses searches after', async () => {
    const threads = pool();
    const request: ThreadSearch = { pattern: 'x[0-9]y', flags: {}, options: allLines };
    const pending = Promise.allSettled([
      threads.search(utf8('x1y\n'), request),
      threads.search(utf8('x2y\n'), request),
    ]);
    await threads.close();
    for (const search of await pending) {
      expect(search).toMatchObject({ status: 'rejected', reason: { code: 'unavailable' } });
    }
    await expect(threads.search(utf8('x3y\n'), request)).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('the event loop', () => {
  it('keeps turning while a 32 MiB single-line regex search runs on a thread', async () => {
    const threads = pool();
    const request: ThreadSearch = { pattern: 'a(b|c)x[0-9]+y', flags: {}, options: allLines };
    // The thread starts (and loads its code) before the search counted here.
    await threads.search(utf8('abx1y\n'), request);
    const huge = utf8(longLine(32 * MiB, 'x1234y'));
    let turns = 0;
    let searching = true;
    const turn = () => {
      if (!searching) return;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    const found = await threads.search(huge, request);
    searching = false;
    expect(found?.count).toBe(1);
    // On the loop, the search would be one re2js call: the loop would turn a handful of times.
    expect(turns).toBeGreaterThan(1_000);
  });
});

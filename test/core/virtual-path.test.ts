// Virtual paths: what is refused (and with which code and message), what is canonical, and the path helpers.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import { readFileSync } from 'node:fs';
import {
  baseName,
  isCanonicalPath,
  joinPath,
  MAX_PATH_BYTES,
  parentPath,
  parseVirtualPath,
  utf8ByteLength,
} from '../../src/core/virtual-path.ts';

function refusal(input: unknown, options?: { directory?: boolean }): ToolError {
  try {
    parseVirtualPath(input, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('parseVirtualPath refuses', () => {
  it.each([null, undefined, 42, {}, [], true, Symbol('x')])('a non-string (%s) as invalid_argument', (input) => {
    const error = refusal(input);
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toMatch(/must be a string/);
    expect(error.details).toEqual({ path: input });
  });

  it('NUL anywhere', () => {
    for (const input of ['\u0000', 'a\u0000b', 'a/\u0000', '\u0000/a']) {
      const error = refusal(input);
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(/NUL/);
      expect(error.details).toEqual({ path: input });
    }
  });

  it.each(['\u0001', '\t', '\n', '\r', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f'])(
    'the control character %j',
    (char) => {
      const error = refusal(`src/a${char}b.ts`);
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toContain(`U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
      // The offending path is quoted as JSON, so the message itself carries no raw control character.
      expect(error.message).toContain(JSON.stringify(`src/a${char}b.ts`));
    },
  );

  it('backslashes, whatever they would mean elsewhere', () => {
    for (const input of ['a\\b', '..\\x', 'C:\\x', '\\\\server\\share']) {
      const error = refusal(input);
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(/backslash/);
    }
  });

  it('empty segments other than one leading /', () => {
    for (const input of ['a//b', '//a', '//', 'a//', '/a//b', '///']) {
      const error = refusal(input, { directory: true });
      expect(error.code).toBe('invalid_argument');
      expect(error.message).toMatch(/empty segment/);
    }
  });

  it('text that is not NFC, naming the NFC spelling to send instead', () => {
    const error = refusal('cafe\u0301/menu.txt');
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toMatch(/NFC/);
    expect(error.message).toContain('"caf\u00e9/menu.txt"');
    // A Kelvin sign is canonically K, so it is not NFC either.
    expect(refusal('\u212a').code).toBe('invalid_argument');
  });

  it('unpaired surrogates, which UTF-8 cannot carry', () => {
    for (const input of ['\ud800', 'a\udc00b', 'x/\ud83d']) expect(refusal(input).message).toMatch(/surrogate/);
  });

  it('more than 4096 UTF-8 bytes, counting multi-byte characters by their bytes', () => {
    expect(parseVirtualPath('a'.repeat(MAX_PATH_BYTES)).path).toHaveLength(MAX_PATH_BYTES);
    expect(refusal('a'.repeat(MAX_PATH_BYTES + 1)).message).toMatch(/longer than 4096 bytes/);
    expect(parseVirtualPath('\u00e9'.repeat(2048)).segments).toHaveLength(1);
    expect(refusal('\u00e9'.repeat(2049)).code).toBe('invalid_argument');
    expect(parseVirtualPath('\u{1f600}'.repeat(1024)).segments).toHaveLength(1);
    expect(refusal('\u{1f600}'.repeat(1025)).code).toBe('invalid_argument');
  });

  it('a huge path by its length before reading the rest of it, with a short message', () => {
    // A NUL, a backslash and a ".." past the limit are never reached: the length decides first.
    const huge = 'a/'.repeat(5_000_000) + '\0\\/../';
    const error = refusal(huge);
    expect(error.message).toMatch(/is longer than 4096 bytes in UTF-8/);
    expect(error.message.length).toBeLessThan(400);
    // Measuring the length stops one byte past the limit, however long the path.
    expect(utf8ByteLength(huge, MAX_PATH_BYTES)).toBe(MAX_PATH_BYTES + 1);
  });

  it('a ".." segment anywhere as path_outside_workspace', () => {
    for (const input of ['..', '../a', 'a/..', 'a/../a', '/..', './..', 'a/b/../c', '../']) {
      const error = refusal(input, { directory: true });
      expect(error.code).toBe('path_outside_workspace');
      expect(error.message).toContain(JSON.stringify(input));
      expect(error.details).toEqual({ path: input });
    }
  });

  it('a trailing / unless a directory is meant', () => {
    const error = refusal('src/');
    expect(error.code).toBe('invalid_argument');
    expect(error.message).toBe('The path "src/" names a directory; remove the trailing /.');
    expect(parseVirtualPath('src/', { directory: true })).toEqual({
      segments: ['src'],
      path: 'src',
      trailingSlash: true,
    });
  });
});

describe('parseVirtualPath accepts', () => {
  it.each(['', '/', '.', './', '/.', '/./', './.'])('%j as the root', (input) => {
    expect(parseVirtualPath(input)).toMatchObject({ segments: [], path: '' });
  });

  it('a leading / as the workspace root and drops . segments', () => {
    expect(parseVirtualPath('/src/index.ts')).toEqual({
      segments: ['src', 'index.ts'],
      path: 'src/index.ts',
      trailingSlash: false,
    });
    expect(parseVirtualPath('./a/./b/.').path).toBe('a/b');
  });

  it('names that only look odd: dots, percent escapes, spaces, quotes, colons, unicode', () => {
    for (const name of [
      '...',
      '..a',
      'a..',
      '.a',
      '%2e%2e',
      '..%2f',
      ' x ',
      '"q"',
      'C:',
      'file.txt::$DATA',
      '~',
      '\u00a0',
      'caf\u00e9',
      '\u202e',
      '\uff0e\uff0e',
      '\u{1f600}',
    ]) {
      expect(parseVirtualPath(`d/${name}`).segments).toEqual(['d', name]);
    }
  });
});

describe('path helpers', () => {
  it('joinPath, parentPath and baseName work on canonical paths', () => {
    expect(joinPath([])).toBe('');
    expect(joinPath(['a', 'b'])).toBe('a/b');
    expect(parentPath('a/b/c')).toBe('a/b');
    expect(parentPath('a')).toBe('');
    expect(parentPath('')).toBe('');
    expect(baseName('a/b/c.ts')).toBe('c.ts');
    expect(baseName('a')).toBe('a');
    expect(baseName('')).toBe('');
  });

  it('utf8ByteLength agrees with TextEncoder and stops early past a limit', () => {
    for (const text of ['', 'abc', '\u00e9', '\u20ac', '\u{1f600}', 'a\u{10ffff}z', '\ud800']) {
      expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
    }
    expect(utf8ByteLength('a'.repeat(1000), 10)).toBe(11);
  });
});

describe('isCanonicalPath', () => {
  /** The definition it must agree with: parseVirtualPath accepts it and spells it the same, and it is not the root. */
  const canonical = (text: string) => {
    try {
      return text !== '' && parseVirtualPath(text).path === text;
    } catch {
      return false;
    }
  };

  it('agrees with parseVirtualPath on hand-picked paths and every path of the conformance cases', () => {
    const picked = [
      'a',
      'a/b',
      'src/index.ts',
      '',
      '/',
      '.',
      './a',
      'a/.',
      'a/..',
      '../a',
      'a//b',
      'a/',
      '/a',
      '...',
      'a/...',
      '..a',
      'a..',
      '.a/.b',
      'a\\b',
      'a\u0000b',
      'a\u001fb',
      'a\u007fb',
      'a\u0085b',
      'caf\u00e9',
      'cafe\u0301',
      '\ud800',
      '\u{1f600}',
      ' ',
      'a b',
      '~/x',
      'x'.repeat(MAX_PATH_BYTES),
      'x'.repeat(MAX_PATH_BYTES + 1),
      `${'\u00e9'.repeat(2048)}`,
      `${'\u00e9'.repeat(2049)}`,
    ];
    const cases = JSON.parse(
      readFileSync(new URL('../fixtures/conformance/paths/cases.json', import.meta.url), 'utf8'),
    ) as { groups: { cases?: { input?: unknown; path?: unknown }[] }[] };
    const fromConformance = cases.groups.flatMap((group) =>
      (group.cases ?? []).flatMap((entry) =>
        [entry.input, entry.path].filter((value): value is string => typeof value === 'string'),
      ),
    );
    expect(fromConformance.length).toBeGreaterThan(20);
    for (const text of [...picked, ...fromConformance])
      expect(isCanonicalPath(text), JSON.stringify(text)).toBe(canonical(text));
  });

  it('agrees with parseVirtualPath on 20,000 random strings of path-like characters', () => {
    const alphabet = [
      'a',
      'b',
      '/',
      '/',
      '.',
      '.',
      '\\',
      ' ',
      '\u0000',
      '\u001b',
      '\u007f',
      '\u0090',
      '\u00e9',
      'e\u0301',
      '\ud83d',
      '\ude00',
      '\u{1f600}',
      '~',
      '%',
      ':',
    ];
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let run = 0; run < 20_000; run += 1) {
      let text = '';
      for (let length = next() % 12; length > 0; length -= 1) text += alphabet[next() % alphabet.length];
      expect(isCanonicalPath(text), JSON.stringify(text)).toBe(canonical(text));
    }
  });
});

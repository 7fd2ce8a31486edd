// Compiling grep patterns: ripgrep's meaning of classes, the literals that spare re2js, and errors that name a position.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/core/errors.ts';
import { compileTextPattern } from '../../../src/tools/search/text-pattern.ts';

function refusal(pattern: string, options = {}): { message: string; position: unknown } {
  try {
    compileTextPattern(pattern, options);
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    expect(error.code).toBe('invalid_argument');
    expect(error.details).toMatchObject({ pattern });
    return { message: error.message, position: error.details?.position };
  }
  throw new Error(`${pattern} compiled`);
}

describe('invalid patterns', () => {
  it.each([
    ['a(b', 1],
    ['ab(c(d)', 2],
    ['a)b', 1],
    ['x[abc', 1],
    ['a**', 1],
    ['x{2,1}', 1],
    ['ok\\q', 2],
    ['[z-a]', 1],
    ['(?z)', 0],
    ['ab\\', 2],
    ['\\d(', 2],
    ['a{1001}', 1],
  ])('%s is refused at position %i', (pattern, position) => {
    const answer = refusal(pattern);
    expect(answer.position).toBe(position);
    expect(answer.message).toContain(`position ${position}`);
    expect(answer.message).toMatch(/fixedStrings/);
  });

  it('refuses a line break outside multiline mode, as rg does, and takes it in multiline mode', () => {
    expect(refusal('a\\nb').position).toBe(1);
    expect(refusal('x\\x0A').position).toBe(1);
    expect(refusal('[\\n]').position).toBe(0);
    expect(refusal('a\nb', { fixedStrings: true }).position).toBe(1);
    expect(refusal('a\\nb').message).toMatch(/multiline: true/);
    expect(() => compileTextPattern('a\\nb', { multiline: true })).not.toThrow();
    // Classes that merely include a line feed lose it, as ripgrep strips it.
    expect(() => compileTextPattern('[^a]\\s')).not.toThrow();
  });

  it('takes metacharacters literally with fixedStrings', () => {
    expect(compileTextPattern('a(b[c', { fixedStrings: true }).literal).toBe('a(b[c');
  });
});

describe('literals', () => {
  it('searches a pattern that is plain text without the regex engine', () => {
    expect(compileTextPattern('foo\\.bar').literal).toBe('foo.bar');
    expect(compileTextPattern('(?:x){3}yz').literal).toBe('xxxyz');
    expect(compileTextPattern('foo.bar').literal).toBeUndefined();
    expect(compileTextPattern('').literal).toBe('');
  });

  it('finds the literals every match contains, for the byte prefilter and the lines to try', () => {
    const pattern = compileTextPattern('import\\s+\\w+ from');
    expect(pattern.prefilter.all.map((literal) => literal.text).sort()).toEqual([' from', 'import']);
    expect(pattern.lineLiteral).toBe('import');
    const alternatives = compileTextPattern('foo|bar');
    expect(alternatives.prefilter.anyOf?.map((literal) => literal.text)).toEqual(['foo', 'bar']);
    expect(compileTextPattern('\\d+').prefilter).toEqual({ all: [], anyOf: undefined });
  });

  it('prefilters a case-insensitive literal by its bytes only where ASCII folding is Unicode folding', () => {
    const prefiltered = (literal: string) =>
      compileTextPattern(literal, { caseInsensitive: true }).prefilter.all.map((part) => part.text);
    expect(prefiltered('todo')).toEqual(['todo']);
    // k and s have non-ASCII cases (the Kelvin sign, the long s): the longest part without them serves.
    expect(prefiltered('needle_token')).toEqual(['needle_to']);
    expect(prefiltered('café au lait')).toEqual([' au lait']);
    expect(prefiltered('ks')).toEqual([]);
  });
});

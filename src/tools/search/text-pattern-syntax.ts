// One pass over a grep pattern before RE2 compiles it: ripgrep's meaning of \d \w \s, and the positions errors name.

/**
 * ripgrep's \w: Unicode word characters (Alphabetic, marks, decimal digits, connector punctuation,
 * joiners), as members of a class. RE2's own \w is ASCII only.
 */
const WORD_MEMBERS =
  '\\p{L}\\p{M}\\p{Nd}\\p{Pc}\\p{Nl}\\x{200C}\\x{200D}\\x{24B6}-\\x{24E9}\\x{1F130}-\\x{1F149}\\x{1F150}-\\x{1F169}\\x{1F170}-\\x{1F189}';
/** ripgrep's \s: Unicode White_Space (RE2's \s leaves out \v and everything beyond ASCII). */
const SPACE_MEMBERS =
  '\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}';

/** Escapes rewritten outside a class. */
const OUTSIDE: Record<string, string> = {
  d: '\\p{Nd}',
  D: '\\P{Nd}',
  w: `[${WORD_MEMBERS}]`,
  W: `[^${WORD_MEMBERS}]`,
  s: `[${SPACE_MEMBERS}]`,
  S: `[^${SPACE_MEMBERS}]`,
};
/**
 * Escapes rewritten inside a class. \W and \S stay RE2's (ASCII) there: a class cannot hold the
 * complement of a Unicode union.
 */
const INSIDE: Record<string, string> = { d: '\\p{Nd}', D: '\\P{Nd}', w: WORD_MEMBERS, s: SPACE_MEMBERS };

/** The spellings of a line feed a pattern may use. */
const NEWLINE_ESCAPE = /^\\(?:n|x0[aA]|x\{0*[aA]\})$/;

export interface PatternSyntax {
  /** The pattern as RE2 compiles it. */
  source: string;
  /** Where the pattern names a line feed outside a class (or a class of only one), if it does. */
  newlineAt: number | undefined;
  /** Where an opening parenthesis is left unclosed (the last one), if any. */
  unclosedParenAt: number | undefined;
  /** Where a closing parenthesis has no opening one, if any. */
  strayParenAt: number | undefined;
  /** Where a class is opened and never closed, if any. */
  unclosedClassAt: number | undefined;
}

/**
 * Rewrites \d \D \w \W \s \S to ripgrep's Unicode meaning; in line mode (`lines`), \A and \z
 * become ^ and $, since ripgrep matches them at each line's ends there. Escaped text (\Q...\E),
 * classes and escapes are followed so that nothing else changes.
 */
export function readPatternSyntax(pattern: string, lines: boolean): PatternSyntax {
  let source = '';
  let newlineAt: number | undefined;
  let strayParenAt: number | undefined;
  let unclosedClassAt: number | undefined;
  const parens: number[] = [];
  let classStart = -1;
  let classBody = '';
  let i = 0;
  const noteNewline = (at: number) => (newlineAt ??= at);
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '\\') {
      const escape = readEscape(pattern, i);
      const letter = escape[1] ?? '';
      if (letter === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const quoted = end === -1 ? pattern.slice(i) : pattern.slice(i, end + 2);
        if (quoted.includes('\n')) noteNewline(i + quoted.indexOf('\n'));
        source += quoted;
        i += quoted.length;
        continue;
      }
      if (classStart >= 0) {
        source += INSIDE[letter] !== undefined && escape.length === 2 ? INSIDE[letter] : escape;
        classBody += escape;
      } else {
        if (NEWLINE_ESCAPE.test(escape)) noteNewline(i);
        if (escape.length === 2 && OUTSIDE[letter] !== undefined) source += OUTSIDE[letter];
        else if (lines && escape === '\\A') source += '^';
        else if (lines && escape === '\\z') source += '$';
        else source += escape;
      }
      i += escape.length;
      continue;
    }
    if (classStart >= 0) {
      if (char === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2);
        const named = end === -1 ? char : pattern.slice(i, end + 2);
        source += named;
        classBody += named;
        i += named.length;
        continue;
      }
      // A ']' first in a class is a member, as RE2 reads it.
      if (char === ']' && classBody !== '' && classBody !== '^') {
        if (NEWLINE_ESCAPE.test(classBody) || classBody === '\n') noteNewline(classStart);
        classStart = -1;
      } else {
        classBody += char;
      }
      source += char;
      i += 1;
      continue;
    }
    if (char === '[') {
      classStart = i;
      classBody = '';
    } else if (char === '(') {
      parens.push(i);
    } else if (char === ')') {
      if (parens.pop() === undefined) strayParenAt ??= i;
    } else if (char === '\n') {
      noteNewline(i);
    }
    source += char;
    i += 1;
  }
  if (classStart >= 0) unclosedClassAt = classStart;
  return { source, newlineAt, unclosedParenAt: parens.at(-1), strayParenAt, unclosedClassAt };
}

/** The escape starting at `at` (a backslash): with its braces (\x{..}, \p{..}) or two hex digits (\x41). */
function readEscape(pattern: string, at: number): string {
  const letter = pattern[at + 1];
  if (letter === undefined) return '\\';
  if ((letter === 'x' || letter === 'p' || letter === 'P') && pattern[at + 2] === '{') {
    const end = pattern.indexOf('}', at + 3);
    return end === -1 ? pattern.slice(at) : pattern.slice(at, end + 1);
  }
  if (letter === 'x') return pattern.slice(at, at + 4);
  if (letter === 'p' || letter === 'P') return pattern.slice(at, at + 3);
  // A surrogate pair after a backslash is one escaped character.
  const code = letter.charCodeAt(0);
  return pattern.slice(at, code >= 0xd800 && code <= 0xdbff ? at + 3 : at + 2);
}

// A grep pattern compiled once per call: RE2 through re2js, with what lets most files and lines skip it.
import { RE2JS, RE2JSSyntaxException } from 're2js';
import { ToolError } from '../../core/errors.ts';
import { ByteLiteral, foldablePart, type BytePrefilter } from './text-literal.ts';
import { readPatternSyntax, type PatternSyntax } from './text-pattern-syntax.ts';

export interface PatternOptions {
  /** The pattern is literal text (rg -F). */
  fixedStrings?: boolean | undefined;
  /** Unicode simple case folding (rg -i). */
  caseInsensitive?: boolean | undefined;
  /** Matches may span lines (rg -U); `.` still stops at a line feed unless (?s). */
  multiline?: boolean | undefined;
}

export interface TextPattern {
  multiline: boolean;
  /** Set when every match is exactly this text, case included: searched with indexOf, never re2js. */
  literal: string | undefined;
  /** The RE2 program (unused while `literal` serves); ^ and $ match at line ends. */
  regex: RE2JS;
  /** A text each match contains (the longest such), case included: lines without it are not tried. */
  lineLiteral: string | undefined;
  /** What a file must contain to hold a match, tried on its bytes before it is decoded. */
  prefilter: BytePrefilter;
  /** Lines must be tried one by one: the pattern turns ^ and $ into text anchors itself, with (?-m). */
  linesAlone: boolean;
}

/** The most literals of an alternation the byte prefilter looks for; past that, a scan each costs more than it saves. */
const MAX_PREFILTER_ALTERNATIVES = 8;

/** Compiles a grep pattern; an invalid one is `invalid_argument` naming the position. */
export function compileTextPattern(pattern: string, options: PatternOptions = {}): TextPattern {
  const multiline = options.multiline === true;
  const caseInsensitive = options.caseInsensitive === true;
  const syntax: PatternSyntax = options.fixedStrings
    ? { ...emptySyntax(), source: RE2JS.quote(pattern), newlineAt: indexOrUndefined(pattern, '\n') }
    : readPatternSyntax(pattern, !multiline);
  if (!multiline && syntax.newlineAt !== undefined) {
    throw new ToolError(
      'invalid_argument',
      `The pattern names a line break at position ${syntax.newlineAt}, which no single line contains; ` +
        'set multiline: true to match across lines.',
      { pattern, position: syntax.newlineAt },
    );
  }
  const flags = RE2JS.MULTILINE | (caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  const regex = compileOrExplain(pattern, syntax, flags);
  const literal = options.fixedStrings ? pattern : pureLiteral(regex, syntax.source);
  const linesAlone = /\(\?[a-zA-Z]*-[a-zA-Z]*m/.test(syntax.source);
  if (literal !== undefined && !caseInsensitive) {
    return {
      multiline,
      literal,
      regex,
      lineLiteral: literal,
      prefilter: { all: literal === '' ? [] : [new ByteLiteral(literal)], anyOf: undefined },
      linesAlone,
    };
  }
  if (literal !== undefined) {
    // re2js derives no literals under case folding; the literal's ASCII part still rejects files by its bytes.
    const part = foldablePart(literal);
    const all = part === undefined ? [] : [new ByteLiteral(part, true)];
    return {
      multiline,
      literal: undefined,
      regex,
      lineLiteral: undefined,
      prefilter: { all, anyOf: undefined },
      linesAlone,
    };
  }
  const { all, anyOf } = requiredLiterals(regex);
  const longest = all.reduce<string | undefined>(
    (best, text) => (best && best.length >= text.length ? best : text),
    undefined,
  );
  return {
    multiline,
    literal: undefined,
    regex,
    lineLiteral: longest,
    prefilter: {
      all: all.map((text) => new ByteLiteral(text)),
      anyOf:
        anyOf && anyOf.length <= MAX_PREFILTER_ALTERNATIVES ? anyOf.map((text) => new ByteLiteral(text)) : undefined,
    },
    linesAlone,
  };
}

function emptySyntax(): PatternSyntax {
  return {
    source: '',
    newlineAt: undefined,
    unclosedParenAt: undefined,
    strayParenAt: undefined,
    unclosedClassAt: undefined,
  };
}

function indexOrUndefined(text: string, part: string): number | undefined {
  const at = text.indexOf(part);
  return at === -1 ? undefined : at;
}

function compileOrExplain(pattern: string, syntax: PatternSyntax, flags: number): RE2JS {
  try {
    return RE2JS.compile(syntax.source, flags);
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) throw error;
    // The rewritten pattern's offsets are not the caller's: the original's own error names them.
    let reason = error;
    if (syntax.source !== pattern) {
      try {
        RE2JS.compile(pattern, flags);
      } catch (original) {
        if (original instanceof RE2JSSyntaxException) reason = original;
      }
    }
    const position = errorPosition(pattern, syntax, reason);
    const near = pattern.slice(position, position + 12);
    throw new ToolError(
      'invalid_argument',
      `The pattern is not a valid RE2 regular expression: ${reason.getDescription()} at position ${position}` +
        ` (0-based, at ${JSON.stringify(near)}); correct it, or set fixedStrings: true to search for the text as it is.`,
      { pattern, position },
    );
  }
}

function errorPosition(pattern: string, syntax: PatternSyntax, error: RE2JSSyntaxException): number {
  const description = error.getDescription();
  if (description === 'missing closing )') return syntax.unclosedParenAt ?? 0;
  if (description === 'unexpected )') return syntax.strayParenAt ?? 0;
  if (description === 'missing closing ]') return syntax.unclosedClassAt ?? 0;
  if (description.startsWith('trailing backslash')) return Math.max(pattern.length - 1, 0);
  const fragment = error.getPattern();
  const at = fragment ? pattern.indexOf(fragment) : -1;
  return at === -1 ? 0 : at;
}

/** The text a pattern matches when it is a literal (no class, repetition or anchor), case included. */
function pureLiteral(regex: RE2JS, source: string): string | undefined {
  // Case folding leaves re2js no literal prefix, so a folded pattern is asked again without it.
  const re2 =
    (regex.flags() & RE2JS.CASE_INSENSITIVE) === 0 ? regex.re2() : RE2JS.compile(source, RE2JS.MULTILINE).re2();
  return re2.prefixComplete && typeof re2.prefix === 'string' ? re2.prefix : undefined;
}

/** A node of re2js's own prefilter tree (PrefilterTree): every match contains EXACT, AND all, OR one of its subs. */
interface PrefilterNode {
  type: number;
  str?: unknown;
  subs?: unknown;
}
const EXACT = 1;
const AND = 2;
const OR = 3;

/**
 * The literals every match contains, read from re2js's prefilter tree (built from the parsed
 * pattern, so alternations and optional parts are accounted for). A tree of an unknown shape
 * yields none, which only makes the search slower.
 */
function requiredLiterals(regex: RE2JS): { all: string[]; anyOf: string[] | undefined } {
  const root = (regex.re2() as { prefilter?: PrefilterNode | null }).prefilter;
  if (!root) return { all: [], anyOf: undefined };
  const exact = (node: PrefilterNode): string | undefined =>
    node.type === EXACT && typeof node.str === 'string' && node.str !== '' ? node.str : undefined;
  const alternatives = (node: PrefilterNode): string[] | undefined => {
    if (node.type !== OR || !Array.isArray(node.subs)) return undefined;
    const texts = (node.subs as PrefilterNode[]).map(exact);
    return texts.every((text) => text !== undefined) ? (texts as string[]) : undefined;
  };
  const single = exact(root);
  if (single !== undefined) return { all: [single], anyOf: undefined };
  if (root.type === OR) return { all: [], anyOf: alternatives(root) };
  if (root.type !== AND || !Array.isArray(root.subs)) return { all: [], anyOf: undefined };
  const subs = root.subs as PrefilterNode[];
  const all = subs.map(exact).filter((text): text is string => text !== undefined);
  const anyOf = subs.map(alternatives).find((texts) => texts !== undefined);
  return { all, anyOf };
}

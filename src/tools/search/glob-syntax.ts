// ripgrep's glob dialect (globset) checked and its `{a,b}` alternatives expanded into plain gitignore lines.
import { ToolError } from '../../core/errors.ts';

/** The most lines one glob may expand into: `{a,b}` groups multiply, and a pattern must not become millions. */
export const MAX_GLOB_EXPANSIONS = 1_024;

/**
 * The gitignore lines a glob stands for, one per combination of its `{a,b}` alternatives.
 * A glob with a '/' before its end is anchored as a whole (as ripgrep decides on the glob as
 * written), so an alternative without one is anchored with a leading '/'.
 */
export function expandGlob(glob: string): string[] {
  const negated = glob.startsWith('!');
  const body = negated ? glob.slice(1) : glob;
  const parts = splitAlternatives(glob, body);
  let lines = [''];
  for (const part of parts) {
    const next: string[] = [];
    for (const prefix of lines) for (const choice of part) next.push(prefix + choice);
    if (next.length > MAX_GLOB_EXPANSIONS) {
      throw invalidGlob(glob, `its {a,b} alternatives make more than ${MAX_GLOB_EXPANSIONS} patterns`);
    }
    lines = next;
  }
  const anchored = hasInnerSlash(body);
  return lines.map((line) => {
    const anchor = anchored && !hasInnerSlash(line) && !line.startsWith('/') ? '/' : '';
    return `${negated ? '!' : ''}${anchor}${line}`;
  });
}

/** The glob as a list of parts, each the choices at that place (a literal stretch has one). */
function splitAlternatives(glob: string, body: string): string[][] {
  const parts: string[][] = [];
  let literal = '';
  let group: string[] | undefined;
  let choice = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char === '\\') {
      if (i + 1 >= body.length) throw invalidGlob(glob, 'it ends with a lone backslash');
      const escaped = body.slice(i, i + 2);
      if (group) choice += escaped;
      else literal += escaped;
      i += 1;
      continue;
    }
    if (char === '[') {
      const end = classEnd(glob, body, i);
      const text = body.slice(i, end + 1);
      if (group) choice += text;
      else literal += text;
      i = end;
      continue;
    }
    if (char === '{') {
      if (group) throw invalidGlob(glob, 'it nests {a,b} alternatives, which ripgrep does not allow');
      parts.push([literal]);
      literal = '';
      group = [];
      choice = '';
    } else if (char === '}' && group) {
      group.push(choice);
      parts.push(group);
      group = undefined;
    } else if (char === ',' && group) {
      group.push(choice);
      choice = '';
    } else if (group) {
      choice += char;
    } else {
      literal += char;
    }
  }
  if (group) throw invalidGlob(glob, "it opens '{' without closing '}'");
  parts.push([literal]);
  return parts;
}

/** The index of the ']' closing the class opened at `start`; a ']' right after '[' or '[!' is a member. */
function classEnd(glob: string, body: string, start: number): number {
  let i = start + 1;
  if (body[i] === '!' || body[i] === '^') i += 1;
  if (body[i] === ']') i += 1;
  let previous = '';
  for (; i < body.length; i++) {
    const char = body[i]!;
    if (char === ']') return i;
    if (char === '-' && previous !== '' && body[i + 1] !== undefined && body[i + 1] !== ']') {
      const to = body[i + 1]!;
      if (to.codePointAt(0)! < previous.codePointAt(0)!) {
        throw invalidGlob(glob, `its character class has the range ${previous}-${to}, which runs backwards`);
      }
      previous = '';
      i += 1;
      continue;
    }
    previous = char;
  }
  throw invalidGlob(glob, "it opens a character class '[' without closing it with ']'");
}

function hasInnerSlash(text: string): boolean {
  const end = text.endsWith('/') ? text.length - 1 : text.length;
  return text.slice(0, end).includes('/');
}

function invalidGlob(glob: string, why: string): ToolError {
  const shown = glob.length > 200 ? `${glob.slice(0, 200)}…` : glob;
  return new ToolError('invalid_argument', `The glob ${JSON.stringify(shown)} is invalid: ${why}.`, { glob: shown });
}

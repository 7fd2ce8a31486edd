// Patch text shared by both parsers: its lines, a heredoc wrapper, and errors pointing at a line.
import { ToolError } from '../../core/errors.ts';
import { cutAtChars } from '../../core/text-lines.ts';

/** Codex's lenient mode accepts these first lines, left behind when a heredoc never reached a shell. */
const HEREDOC_OPENERS = new Set(['<<EOF', "<<'EOF'", '<<"EOF"']);

/** A patch_invalid error pointing at a 1-based patch line. */
export function invalidPatch(line: number, message: string): ToolError {
  return new ToolError('patch_invalid', `line ${line}: ${message}`, { line });
}

/** A patch line quoted for an error message, cut so that one huge line cannot flood the message. */
export function quoteLine(text: string): string {
  return `'${text.length > 80 ? `${cutAtChars(text, 80)}…` : text}'`;
}

/** The patch's lines without their line endings, as Rust's `str::lines` gives them to Codex. */
export function splitPatchLines(text: string): string[] {
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (line.endsWith('\r')) lines[index] = line.slice(0, -1);
  }
  return lines;
}

export function isBlank(line: string): boolean {
  return line.trim() === '';
}

/** 0-based indexes of the first and last non-blank lines, or undefined for a blank text. */
export function contentBounds(lines: readonly string[]): { first: number; last: number } | undefined {
  let first = 0;
  while (first < lines.length && isBlank(lines[first]!)) first += 1;
  if (first === lines.length) return undefined;
  let last = lines.length - 1;
  while (isBlank(lines[last]!)) last -= 1;
  return { first, last };
}

/**
 * The heredoc wrapper around a patch, if any: 0-based indexes of its opener and of its closing
 * `EOF` line (undefined when the closer is missing).
 */
export function findHeredoc(lines: readonly string[]): { opener: number; closer: number | undefined } | undefined {
  const bounds = contentBounds(lines);
  if (bounds === undefined || !HEREDOC_OPENERS.has(lines[bounds.first]!.trim())) return undefined;
  const closes = bounds.last > bounds.first && lines[bounds.last]!.trim() === 'EOF';
  return { opener: bounds.first, closer: closes ? bounds.last : undefined };
}

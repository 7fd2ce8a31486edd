// The passes of a seek, in order, as Codex's seek_sequence has them: the exact text, then ever more forgiving folds of a line.

/**
 * The passes, in order: the exact text, then the forgiving ones. Codex trims with Rust's notion of
 * whitespace; JavaScript's trim differs only at the margins (it also trims U+FEFF, not U+0085).
 */
export const passes: readonly ((line: string) => string)[] = [
  (line) => line,
  (line) => line.trimEnd(),
  (line) => line.trim(),
  (line) => foldPunctuation(line.trim()),
];

/** The ASCII look-alike of one of Codex's typographic characters, or undefined for any other code unit. */
function asciiFor(code: number): string | undefined {
  if (code < 0xa0) return undefined;
  if ((code >= 0x2010 && code <= 0x2015) || code === 0x2212) return '-';
  if (code >= 0x2018 && code <= 0x201b) return "'";
  if (code >= 0x201c && code <= 0x201f) return '"';
  if (code === 0xa0 || (code >= 0x2002 && code <= 0x200a) || code === 0x202f || code === 0x205f || code === 0x3000)
    return ' ';
  return undefined;
}

/** Unicode dashes, quotes and odd spaces folded to their ASCII look-alikes (a loop: a regex callback is several times slower). */
export function foldPunctuation(line: string): string {
  let folded = '';
  let copied = 0;
  for (let index = 0; index < line.length; index += 1) {
    const ascii = asciiFor(line.charCodeAt(index));
    if (ascii === undefined) continue;
    folded += line.slice(copied, index) + ascii;
    copied = index + 1;
  }
  return copied === 0 ? line : folded + line.slice(copied);
}

// The order ripgrep's --sort path gives: component by component, names compared by their UTF-8 bytes.

const SLASH = 0x2f;

/**
 * Compares two slash-separated paths as ripgrep sorts them: a directory's entries by name, so
 * `a/b` comes before `a-c` (a plain string order puts '-' first). Code units are compared in
 * code-point order, which is UTF-8 byte order; a separator sorts before every other character.
 */
export function comparePaths(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/** A code unit's place in UTF-8 order: surrogates (code points above U+FFFF) follow U+E000..U+FFFF. */
function rank(unit: number): number {
  if (unit === SLASH) return -1;
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}

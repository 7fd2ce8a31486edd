// Finding a plain word in a file's bytes for the edge's grep (edge-grep.ts): a byte search that
// skips files without it undecoded, and the lines holding it numbered as the interpreter's grep
// numbers them.
import { fromBytes } from './edge-fs-paths.ts';
import { newlinesBetween } from './edge-grep-text.ts';

/** A word to find, with what finds it in a file's bytes without decoding them when it is ASCII. */
export interface WordSearch {
  word: string;
  /** The word's bytes and Horspool's shift for each byte value; undefined for a word beyond ASCII. */
  bytes?: Uint8Array;
  shift?: Uint8Array;
}

export function wordSearch(word: string): WordSearch {
  // eslint-disable-next-line no-control-regex
  if (!/^[\x00-\x7f]+$/.test(word) || word.length > 255) return { word };
  const bytes = new TextEncoder().encode(word);
  const shift = new Uint8Array(256).fill(bytes.length);
  for (let at = 0; at < bytes.length - 1; at += 1) shift[bytes[at]!] = bytes.length - 1 - at;
  return { word, bytes, shift };
}

/**
 * Whether `content` holds the ASCII word's bytes (Boyer-Moore-Horspool). It holds them exactly when
 * its UTF-8 text holds the word: the decoder turns each ASCII byte into that character and every
 * other byte into characters beyond ASCII, valid or not, so runs of ASCII match alike.
 */
function holdsBytes(content: Uint8Array, word: Uint8Array, shift: Uint8Array): boolean {
  const last = word.length - 1;
  for (let at = last; at < content.length; at += shift[content[at]!]!) {
    let back = 0;
    while (back <= last && content[at - back] === word[last - back]) back += 1;
    if (back > last) return true;
  }
  return false;
}

/**
 * The lines of a file holding the word (number from 1, line), as the interpreter's grep numbers
 * them; undefined where its limits are within reach (the caller gives the command back).
 */
export function matchingLines(
  content: Uint8Array,
  search: WordSearch,
  maxWork: number,
  maxLines: number,
): [number, string][] | undefined {
  // The interpreter's grep counts its work (a unit per 1,024 characters and per line) and its
  // lines; a text has no more characters than its UTF-8 bytes, nor lines than characters, so most
  // need no count.
  const bound = content.byteLength + 1;
  let text: string | undefined;
  if (bound > maxLines || Math.ceil(content.byteLength / 1024) + bound > maxWork) {
    text = fromBytes(content);
    const newlines = newlinesBetween(text, 0, text.length);
    if (newlines + 1 > maxLines || Math.ceil(text.length / 1024) + newlines + 1 > maxWork) return undefined;
  }
  if (text === undefined && search.bytes !== undefined && !holdsBytes(content, search.bytes, search.shift!)) return [];
  text ??= fromBytes(content);
  const { word } = search;
  // From one occurrence of the word to the next, each line holding one cut out and numbered by the
  // newlines before it (the word holds no newline), rather than the whole text split into lines.
  const found: [number, string][] = [];
  let number = 1;
  let counted = 0;
  for (let at = text.indexOf(word); at !== -1;) {
    const start = text.lastIndexOf('\n', at) + 1;
    number += newlinesBetween(text, counted, start);
    const end = text.indexOf('\n', at);
    found.push([number, text.slice(start, end === -1 ? text.length : end)]);
    if (end === -1) break;
    counted = end;
    at = text.indexOf(word, end + 1);
  }
  if (found.length >= maxLines) return undefined;
  return found;
}

// The text of a shared directory's walk for the edge's grep -r (edge-grep.ts): its files' texts in
// one string, made once the state's commands search the walk again, so that a search of it is one
// pass of the engine's own string search rather than one search a file.
import type { EdgeFs } from './edge-fs.ts';
import { fromBytes } from './edge-fs-paths.ts';
import type { FileNode } from './edge-fs-nodes.ts';

/** A walk's files' texts in one string, each followed by a newline, with where each starts (and the end). */
export interface WalkText {
  text: string;
  starts: Float64Array;
  /** The largest file's bytes. */
  largest: number;
}

/** A shared directory's walk as grep keeps it (edge-grep.ts Walked): its files, and its text once made. */
interface KeptWalk {
  readonly nodes: readonly FileNode[];
  /** Commands that searched it so far, until its text is made. */
  searches: number;
  /** Its text, once made; null where the tree's budget had no room for it. */
  text?: WalkText | null;
}

/**
 * The text of a shared directory's walk (its files' texts in walk order, each followed by a
 * newline, and where each starts), made from its files' contents the second time a command
 * searches the walk and kept with it, so that the commands after search it at once rather than
 * file by file. Made only of contents the shared tree keeps (the blobs' own bytes, the same for
 * every command over the state, none of which a command changes), and within the tree's budget;
 * undefined where it is not made, or where a file is large enough that a search of it counts its
 * work (the file's own search does).
 */
export function textOf(
  walked: KeptWalk,
  contents: readonly Uint8Array[],
  from: number,
  fs: EdgeFs,
  maxWork: number,
  maxLines: number,
): WalkText | undefined {
  const made = walked.text;
  if (made === null) return undefined;
  if (made !== undefined) return made.largest + 1 < maxLines && workOf(made.largest) <= maxWork ? made : undefined;
  walked.searches += 1;
  if (walked.searches < 2) return undefined;
  const { nodes } = walked;
  let largest = 0;
  for (let index = 0; index < nodes.length; index += 1) {
    const content = contents[from + index]!;
    // Not kept in the tree (over its budget): this command's own copy, not to be kept for others.
    if (content !== nodes[index]!.content) return undefined;
    if (content.byteLength > largest) largest = content.byteLength;
  }
  const texts = new Array<string>(nodes.length + 1);
  const starts = new Float64Array(nodes.length + 1);
  let length = 0;
  for (let index = 0; index < nodes.length; index += 1) {
    texts[index] = fromBytes(contents[from + index]!);
    starts[index] = length;
    length += texts[index]!.length + 1;
  }
  starts[nodes.length] = length;
  texts[nodes.length] = '';
  // Two bytes a character at most, as the engine holds a string.
  if (!fs.keepShared(length * 2)) {
    walked.text = null;
    return undefined;
  }
  walked.text = { text: texts.join('\n'), starts, largest };
  return textOf(walked, contents, from, fs, maxWork, maxLines);
}

/** The work the interpreter's grep counts for a file of `bytes` (a unit per 1,024 characters and per line), at most. */
const workOf = (bytes: number) => Math.ceil(bytes / 1024) + bytes + 1;

/**
 * The lines of a walk's text holding the word, by file (numbered within its file), as
 * matchingLines finds them in each file's text: the word holds no newline, so no occurrence spans
 * two files; with `filesOnly`, the first of each file.
 */
export function searchText(
  walkText: WalkText,
  word: string,
  filesOnly: boolean,
  found: (file: number, lines: [number, string][]) => void,
): void {
  const { text, starts } = walkText;
  let file = -1;
  let lines: [number, string][] = [];
  let number = 1;
  let counted = 0;
  for (let at = text.indexOf(word); at !== -1;) {
    if (file === -1 || at >= starts[file + 1]!) {
      if (lines.length > 0) found(file, lines);
      file = fileAt(starts, at);
      lines = [];
      number = 1;
      counted = starts[file]!;
    }
    const start = text.lastIndexOf('\n', at) + 1;
    number += newlinesBetween(text, counted, start);
    // Each file's text is followed by a newline: the line ends within its file.
    const end = text.indexOf('\n', at);
    lines.push([number, text.slice(start, end)]);
    counted = end;
    at = text.indexOf(word, filesOnly ? starts[file + 1]! : end + 1);
  }
  if (lines.length > 0) found(file, lines);
}

/** How many newlines `text` holds from index `from` up to, not including, `before`. */
export function newlinesBetween(text: string, from: number, before: number): number {
  let count = 0;
  for (let at = text.indexOf('\n', from); at !== -1 && at < before; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** The file whose text holds the character at `at`: the last whose start is at or before it. */
function fileAt(starts: Float64Array, at: number): number {
  let low = 0;
  let high = starts.length - 2;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}

// Finding the lines of a decoded text that match a pattern, in order, as ripgrep finds them.
import type { RE2JS } from 're2js';
import type { WorkBudget } from '../../core/work-budget.ts';
import type { TextPattern } from './text-pattern.ts';

/** Takes a matching line, [start, end) with end at its \n or the text's end; answers false to stop the scan. */
export type OnLine = (start: number, end: number) => boolean;

/**
 * Work units (see WorkBudget: about a nanosecond each) of the steps a scan takes: a character
 * passed by indexOf, one run by re2js, and the fixed cost of one re2js call.
 */
export const INDEX_CHAR_COST = 0.25;
export const REGEX_CHAR_COST = 8;
export const REGEX_CALL_COST = 500;

/**
 * Lines are first tried in blocks of about this many characters: a block without a match costs one
 * re2js call, and any line's match is a match of its block (^ and $ match at line ends there).
 */
const BLOCK_CHARS = 64 * 1024;

/** Calls `onLine` for each line of `text` that `pattern` matches, in order, each line once. */
export async function scanLines(text: string, pattern: TextPattern, onLine: OnLine, clock: WorkBudget): Promise<void> {
  if (text.length === 0) return;
  const literal = pattern.literal;
  if (literal !== undefined && !literal.includes('\n')) return scanByLiteral(text, literal, undefined, onLine, clock);
  if (pattern.multiline) return scanMatches(text, pattern.regex, onLine, clock);
  if (pattern.lineLiteral !== undefined && !pattern.linesAlone) {
    return scanByLiteral(text, pattern.lineLiteral, pattern.regex, onLine, clock);
  }
  return scanByBlocks(text, pattern.regex, pattern.linesAlone, onLine, clock);
}

/** The lines holding `literal` (without a line feed), each confirmed by `regex` when given. */
async function scanByLiteral(
  text: string,
  literal: string,
  regex: RE2JS | undefined,
  onLine: OnLine,
  clock: WorkBudget,
): Promise<void> {
  for (let from = 0; from < text.length;) {
    const at = text.indexOf(literal, from);
    if (at === -1) return;
    const start = at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline;
    let cost = (end - from) * INDEX_CHAR_COST;
    let matches = true;
    if (regex !== undefined) {
      matches = regex.test(text.substring(start, end));
      cost += (end - start) * REGEX_CHAR_COST + REGEX_CALL_COST;
    }
    if (matches && !onLine(start, end)) return;
    if (clock.spend(cost)) await clock.pause();
    from = end + 1;
  }
}

/** Every line, tried block by block and then line by line where a block matched. */
async function scanByBlocks(
  text: string,
  regex: RE2JS,
  linesAlone: boolean,
  onLine: OnLine,
  clock: WorkBudget,
): Promise<void> {
  for (let start = 0; start < text.length;) {
    // The block ends at a line feed (or the text's end); a line longer than a block is a block.
    let blockEnd = text.length;
    if (start + BLOCK_CHARS < text.length) {
      blockEnd = text.lastIndexOf('\n', start + BLOCK_CHARS);
      if (blockEnd < start) blockEnd = text.indexOf('\n', start + BLOCK_CHARS);
      if (blockEnd === -1) blockEnd = text.length;
    }
    const candidate = linesAlone || regex.test(text.substring(start, blockEnd));
    if (clock.spend((blockEnd - start) * REGEX_CHAR_COST + REGEX_CALL_COST)) await clock.pause();
    if (candidate) {
      for (let line = start; line <= blockEnd && line < text.length;) {
        const newline = text.indexOf('\n', line);
        const end = newline === -1 || newline > blockEnd ? blockEnd : newline;
        if (regex.test(text.substring(line, end)) && !onLine(line, end)) return;
        if (clock.spend((end - line) * REGEX_CHAR_COST + REGEX_CALL_COST)) await clock.pause();
        line = end + 1;
      }
    }
    start = blockEnd + 1;
  }
}

/**
 * rg -U: matches over the whole text, each search starting where the last match ended; every
 * line a match touches matches (a match's last character is the \n it ends with, if it does).
 */
async function scanMatches(text: string, regex: RE2JS, onLine: OnLine, clock: WorkBudget): Promise<void> {
  const tested = regex.test(text);
  if (clock.spend(text.length * REGEX_CHAR_COST)) await clock.pause();
  if (!tested) return;
  const matcher = regex.matcher(text);
  // The end of the last line reported: lines are reported once, in order.
  let reportedTo = -1;
  for (let from = 0; from <= text.length && matcher.find(from);) {
    const start = matcher.start();
    const end = matcher.end();
    // The place after a final line feed starts no line.
    if (start === text.length && text.endsWith('\n')) return;
    const last = end > start ? end - 1 : start;
    for (let line = start === 0 ? 0 : text.lastIndexOf('\n', start - 1) + 1; ;) {
      const newline = text.indexOf('\n', line);
      const lineEnd = newline === -1 ? text.length : newline;
      if (line > reportedTo) {
        reportedTo = lineEnd;
        if (!onLine(line, lineEnd)) return;
      }
      if (lineEnd >= last) break;
      line = lineEnd + 1;
    }
    if (clock.spend((end - from) * REGEX_CHAR_COST * 4 + REGEX_CALL_COST)) await clock.pause();
    // After an empty match the next search starts one character on (a whole surrogate pair).
    from = end > start ? end : end + ((text.codePointAt(end) ?? 0) > 0xffff ? 2 : 1);
  }
}

// The matching lines of one file as grep reports them: numbers, texts cut to size, and context lines attached once.
import { cutAtChars } from '../../core/text-lines.ts';

/** The longest line text reported, in UTF-16 code units; longer lines are cut. */
export const MAX_LINE_CHARS = 2_000;

/** One matching line, 1-based, with the context lines attached to it. */
export interface LineMatch {
  line: number;
  text: string;
  /** Context before it not shown with an earlier match (rg -B). */
  before?: string[];
  /** Context after it, up to the next match (rg -A). */
  after?: string[];
}

export interface CollectOptions {
  /** Stop after this many matching lines. */
  limit: number;
  /** Keep numbers and texts (content mode); otherwise only count. */
  lines: boolean;
  before: number;
  after: number;
}

/**
 * Takes the matching lines of a text in order and builds the answer. A context line goes to the
 * `after` of the match before it when it is within that match's after-window, otherwise to the
 * `before` of the match after it, and a matching line is never context: listing each match's
 * before, itself and its after gives ripgrep's own sequence of lines.
 */
export class MatchCollector {
  count = 0;
  readonly matches: LineMatch[] = [];
  /** The offset up to which line feeds are counted, and the number of the line starting there. */
  private cursor = 0;
  private cursorLine = 1;
  /** The last match kept: its number and where its line ends. */
  private lastLine = 0;
  private lastEnd = -1;
  private done = false;

  constructor(
    private readonly text: string,
    private readonly options: CollectOptions,
  ) {}

  /** Takes the next matching line [start, end); false once no more are wanted. */
  readonly add = (start: number, end: number): boolean => {
    if (!this.options.lines) {
      this.count += 1;
      return this.count < this.options.limit;
    }
    const line = this.lineNumberAt(start);
    if (this.count === this.options.limit) {
      // A match past the limit only ends the after-window of the last one kept.
      this.attachAfter(line);
      this.done = true;
      return false;
    }
    const gap = this.count === 0 ? line - 1 : line - this.lastLine - 1;
    const taken = this.count === 0 ? 0 : this.attachAfter(line);
    const before = this.linesBefore(start, Math.min(this.options.before, gap - taken));
    const match: LineMatch = { line, text: cutAtChars(this.text.slice(start, end), MAX_LINE_CHARS) };
    if (before.length > 0) match.before = before;
    this.matches.push(match);
    this.count += 1;
    this.lastLine = line;
    this.lastEnd = end;
    // Past the limit a scan only goes on to learn where the last after-window ends.
    return this.count < this.options.limit || this.options.after > 0;
  };

  /** Ends the scan: the last match's after-window runs to its size or the text's end. */
  finish(): void {
    if (this.options.lines && this.count > 0 && !this.done) this.attachAfter(Number.POSITIVE_INFINITY);
    this.done = true;
  }

  /** Attaches to the last match the lines after it, up to its window and before line `next`; answers how many. */
  private attachAfter(next: number): number {
    const wanted = Math.min(this.options.after, next - this.lastLine - 1);
    const after: string[] = [];
    let start = this.lastEnd + 1;
    while (after.length < wanted && start < this.text.length) {
      const newline = this.text.indexOf('\n', start);
      const end = newline === -1 ? this.text.length : newline;
      after.push(cutAtChars(this.text.slice(start, end), MAX_LINE_CHARS));
      start = end + 1;
    }
    if (after.length > 0) this.matches[this.matches.length - 1]!.after = after;
    return after.length;
  }

  /** The `count` lines just before the line starting at `start`, in order. */
  private linesBefore(start: number, count: number): string[] {
    const lines: string[] = [];
    let end = start - 1;
    while (lines.length < count && end >= 0) {
      const lineStart = end === 0 ? 0 : this.text.lastIndexOf('\n', end - 1) + 1;
      lines.push(cutAtChars(this.text.slice(lineStart, end), MAX_LINE_CHARS));
      end = lineStart - 1;
    }
    return lines.reverse();
  }

  /** The number of the line starting at `start`, counting line feeds on from the last one asked. */
  private lineNumberAt(start: number): number {
    for (let at = this.text.indexOf('\n', this.cursor); at !== -1 && at < start; at = this.text.indexOf('\n', at + 1)) {
      this.cursorLine += 1;
    }
    this.cursor = start;
    return this.cursorLine;
  }
}

// What the line diff and the file diff share: a text's lines, changed ranges and blocks, line kinds, the LCS budget.

/** Lines `oldStart..oldStart+oldLength` (0-based) of the old text became `newStart..newStart+newLength` of the new. */
export interface ChangedRange {
  oldStart: number;
  oldLength: number;
  newStart: number;
  newLength: number;
}

/** LCS cells one call's diffs may fill in all (a few milliseconds); past them every region is a block replace. */
export const MAX_DIFF_CELLS = 4_000_000;

/** The LCS cells left to the diffs of one call; share one among the files of a patch. */
export class DiffBudget {
  constructor(public cells: number = MAX_DIFF_CELLS) {}
}

/** A line of a diff: in both texts (` `), in the old only (`-`), in the new only (`+`). */
export type Kind = ' ' | '-' | '+';

/** A run of changed lines, no equal line inside it, shown as its old lines (`-`), then its new ones (`+`). */
export interface Block {
  oldStart: number;
  newStart: number;
  oldLength: number;
  newLength: number;
}

/**
 * A text's lines, each with its ending, read on demand: finding where lines start is one pass of
 * `indexOf`, and only the lines a diff shows are ever cut out.
 */
export class Lines {
  private readonly starts: number[] = [];

  constructor(private readonly text: string) {
    if (text.length === 0) return;
    this.starts.push(0);
    for (let end = text.indexOf('\n'); end !== -1 && end + 1 < text.length; end = text.indexOf('\n', end + 1)) {
      this.starts.push(end + 1);
    }
  }

  get length(): number {
    return this.starts.length;
  }

  at(index: number): string {
    return index < this.starts.length ? this.text.slice(this.starts[index], this.starts[index + 1]) : '';
  }

  /**
   * Lines `from..to`, cut at the end of the text: a patched text whose last line is empty and
   * has no newline (`a\n` + `''`) shows that line nowhere, since it is no text at all.
   */
  slice(from: number, to: number): string[] {
    const lines: string[] = [];
    for (let index = from; index < Math.min(to, this.starts.length); index += 1) lines.push(this.at(index));
    return lines;
  }
}

// The parsed form of a patch, whichever format it arrived in: file operations and their hunks.

/** One hunk of an update: the lines to find and what replaces them. Lines carry no line endings. */
export interface Hunk {
  /** `@@ <text>` anchors, in order: each narrows the search to after the line matching it. */
  anchors: string[];
  /** Context and removed lines, in file order: the sequence that must be found. */
  oldLines: string[];
  /** Context and added lines, in file order: what the found sequence becomes. */
  newLines: string[];
  /** `*** End of File`: the sequence must end at the end of the file. */
  endOfFile: boolean;
  /** 1-based line in the patch where the hunk starts (its `@@` header, or its first line). */
  line: number;
  /** Unified diffs: the 1-based old start line of `@@ -a,b +c,d @@`, a hint where to look first. */
  oldStart?: number;
  /**
   * Unified diffs with `\ No newline at end of file`: whether the file ends with a newline after
   * this hunk. Undefined keeps the file's own final-newline state.
   */
  finalNewline?: boolean;
}

export type FileOperation =
  | { kind: 'add'; path: string; /** Complete contents, each line ending in \n. */ contents: string; line: number }
  | { kind: 'delete'; path: string; line: number }
  | { kind: 'update'; path: string; moveTo?: string; hunks: Hunk[]; line: number };

export interface ParsedPatch {
  format: 'codex' | 'unified';
  operations: FileOperation[];
}

// The failures the edge engine's filesystem throws (edge-fs-tree.ts, edge-fs.ts), in a disk's codes and messages.

/**
 * A write below a directory that does not exist. Its message is the system's, as commands that
 * print a failure's message (touch) print it; the interpreter's redirections do not catch it, so
 * the engine (edge-interpreter.ts) tells it apart.
 */
export class MissingDirectoryError extends Error {
  readonly code = 'ENOENT';
  constructor(readonly path: string) {
    super('No such file or directory');
  }
}

/** A failure as Node's fs words it (`ENOENT: no such file or directory, open '/a'`), its code for callers to test. */
export const failure = (code: string, text: string, op: string, path: string) =>
  Object.assign(new Error(`${code}: ${text}, ${op} '${path}'`), { code });
export const noEntry = (op: string, path: string) => failure('ENOENT', 'no such file or directory', op, path);
export const notDirectory = (op: string, path: string) => failure('ENOTDIR', 'not a directory', op, path);
export const isDirectory = (op: string, path: string) =>
  failure('EISDIR', 'illegal operation on a directory', op, path);
export const exists = (op: string, path: string) => failure('EEXIST', 'file already exists', op, path);

// Host operations on a workspace copy that never follow a link a command made, at the last path
// component or any parent: directories are opened one component at a time with O_NOFOLLOW, and
// an entry is named relative to its parent's descriptor (`/proc/self/fd/<fd>/<name>`, Linux's
// way of giving path-based calls an openat), so a directory swapped for a link after it was
// opened changes nothing, and one swapped before is refused (ELOOP) rather than followed.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  unlinkSync,
  type Dirent,
  type Stats,
} from 'node:fs';

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE = constants.O_RDONLY | constants.O_NOFOLLOW;
/** Errors that mean a component is missing, a link, or not a directory: nothing of the copy lies there to act on. */
const NOT_THERE = new Set(['ENOENT', 'ELOOP', 'ENOTDIR']);
/** Removing a directory a running command keeps filling is retried this often before it fails. */
const REMOVE_ATTEMPTS = 5;

/** Whether the error says the path is not there as the copy's own entry (missing, a link, or below a non-directory). */
export function isNotThere(error: unknown): boolean {
  return NOT_THERE.has((error as NodeJS.ErrnoException).code ?? '');
}

/**
 * A workspace copy as one operation (a materialise, a scan, a sync) sees it. Directory
 * descriptors are kept until `close`, so paths handed to other threads stay valid; an operation
 * closes its tree when all its work has settled.
 */
export class ConfinedTree {
  readonly #fds = new Map<string, number>();

  /** `root` is the runner's own directory for the copy: no command can replace it. */
  constructor(readonly root: string) {}

  /** The directory at `dir` ('' is the root) as an open descriptor; throws (ELOOP, ENOTDIR, ENOENT) rather than follow a link. */
  dir(dir: string): number {
    const known = this.#fds.get(dir);
    if (known !== undefined) return known;
    const { parent, name } = split(dir);
    const fd =
      dir === '' ? openSync(this.root, DIRECTORY) : openSync(`/proc/self/fd/${this.dir(parent)}/${name}`, DIRECTORY);
    this.#fds.set(dir, fd);
    return fd;
  }

  /**
   * A host path for `path` whose only component a lookup can meet as a link is the last one:
   * use it only with calls that do not follow a final link (lstat, readlink, unlink, rmdir, mkdir,
   * symlink, rename, open with O_EXCL or O_NOFOLLOW).
   */
  at(path: string): string {
    const { parent, name } = split(path);
    return `/proc/self/fd/${this.dir(parent)}/${name}`;
  }

  lstat(path: string): Stats | undefined {
    try {
      return lstatSync(this.at(path));
    } catch (error) {
      if (isNotThere(error)) return undefined;
      throw error;
    }
  }

  /** The entries of a directory of the copy; none when it is missing or a link. */
  readdir(dir: string): Dirent[] {
    try {
      return readdirSync(`/proc/self/fd/${this.dir(dir)}`, { withFileTypes: true });
    } catch (error) {
      if (isNotThere(error)) return [];
      throw error;
    }
  }

  /** A regular file's bytes; throws (ELOOP) when the path is a link, and when it is no regular file. */
  readFile(path: string): Buffer {
    const fd = openSync(this.at(path), FILE);
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EINVAL' });
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Sets a directory's permission bits through its descriptor (chmod by path would follow a link). */
  chmodDir(dir: string, mode: number): void {
    fchmodSync(this.dir(dir), mode);
  }

  /** Removes what is at `path`, a directory with all it holds, never through a link; nothing there is no error. */
  remove(path: string): void {
    this.forget(path);
    let host: string;
    try {
      host = this.at(path);
    } catch (error) {
      if (isNotThere(error)) return;
      throw error;
    }
    removeEntry(host);
  }

  /** Drops what is known of a directory and all below it (removed or replaced): later calls open it afresh. */
  forget(dir: string): void {
    for (const [known, fd] of this.#fds) {
      if (known === dir || (dir === '' ? true : known.startsWith(`${dir}/`))) {
        closeSync(fd);
        this.#fds.delete(known);
      }
    }
  }

  close(): void {
    this.forget('');
  }
}

/** Runs `work` on a tree of `root`, closing it once the work has settled. */
export async function withTree<T>(root: string, work: (tree: ConfinedTree) => T | Promise<T>): Promise<T> {
  const tree = new ConfinedTree(root);
  try {
    return await work(tree);
  } finally {
    tree.close();
  }
}

/** Removes a directory a command may have changed (and may still be changing), with all it holds, never through a link. */
export function removeTree(dir: string): void {
  const slash = dir.lastIndexOf('/');
  const tree = new ConfinedTree(dir.slice(0, slash) || '/');
  try {
    tree.remove(dir.slice(slash + 1));
  } finally {
    tree.close();
  }
}

/** Removes the entry at a host path whose parent is held by descriptor. */
function removeEntry(host: string): void {
  for (let attempt = 1; ; attempt += 1) {
    let fd: number;
    try {
      fd = openSync(host, DIRECTORY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // A file or a link (or one since the listing): the entry itself goes, nothing it points to.
      if (code === 'ELOOP' || code === 'ENOTDIR') return unlinkMissingOk(host);
      throw error;
    }
    try {
      for (const entry of readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true }))
        removeEntry(`/proc/self/fd/${fd}/${entry.name}`);
    } finally {
      closeSync(fd);
    }
    try {
      rmdirSync(host);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // A running command filled it again meanwhile: empty it once more.
      if (code !== 'ENOTEMPTY' || attempt >= REMOVE_ATTEMPTS) throw error;
    }
  }
}

function unlinkMissingOk(host: string): void {
  try {
    unlinkSync(host);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function split(path: string): { parent: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash === -1 ? { parent: '', name: path } : { parent: path.slice(0, slash), name: path.slice(slash + 1) };
}

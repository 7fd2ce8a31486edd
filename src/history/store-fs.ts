// The `fs` isomorphic-git is given: one bare git directory at GITDIR, its objects and its small files in two tables.
import type { GitFileTable } from './git-files.ts';

/** The git directory every history command names; the tables behind the fs decide where it really lives. */
export const GITDIR = '/git';

interface Stats {
  type: 'file' | 'dir';
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/**
 * The promise API isomorphic-git documents for its injected fs (readFile, writeFile, mkdir,
 * rmdir, unlink, stat, lstat, readdir, readlink, symlink). Directories are implied by the files
 * under them, so mkdir and rmdir change nothing; the git directory holds no symlinks.
 */
export class StoreFs {
  constructor(
    /** `objects/` and everything below it. */
    private readonly objects: GitFileTable,
    /** Everything else: HEAD, config, refs, shallow. */
    private readonly others: GitFileTable,
  ) {}

  async readFile(path: string, options?: string | { encoding?: string }): Promise<Uint8Array | string> {
    const { table, inner } = this.locate(path);
    if (inner === '') throw fsError('EISDIR', path);
    const bytes = await table.read(inner);
    if (bytes === undefined) throw fsError('ENOENT', path);
    const encoding = typeof options === 'string' ? options : options?.encoding;
    return encoding === 'utf8' || encoding === 'utf-8' ? new TextDecoder().decode(bytes) : bytes;
  }

  async writeFile(path: string, data: Uint8Array | string): Promise<void> {
    const { table, inner } = this.locate(path);
    if (inner === '') throw fsError('EISDIR', path);
    await table.write(
      inner,
      typeof data === 'string'
        ? new TextEncoder().encode(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    );
  }

  async mkdir(path: string): Promise<void> {
    this.locate(path);
  }

  async rmdir(path: string): Promise<void> {
    this.locate(path);
  }

  async unlink(path: string): Promise<void> {
    const { table, inner } = this.locate(path);
    if (!(await table.has(inner))) throw fsError('ENOENT', path);
    await table.remove(inner);
  }

  async stat(path: string): Promise<Stats> {
    const { table, inner } = this.locate(path);
    if (inner === '') return stats('dir', 0);
    const bytes = await table.read(inner);
    if (bytes !== undefined) return stats('file', bytes.byteLength);
    if ((await this.readdir(path)).length > 0) return stats('dir', 0);
    throw fsError('ENOENT', path);
  }

  lstat(path: string): Promise<Stats> {
    return this.stat(path);
  }

  async readdir(path: string): Promise<string[]> {
    const { table, inner } = this.locate(path);
    if (inner !== '') return table.children(inner);
    const objects = (await this.objects.children('objects')).length > 0 ? ['objects'] : [];
    return [...new Set([...(await this.others.children('')), ...objects])];
  }

  async readlink(path: string): Promise<string> {
    throw fsError('ENOENT', path);
  }

  async symlink(_target: string, path: string): Promise<void> {
    throw fsError('EPERM', path);
  }

  private locate(path: string): { table: GitFileTable; inner: string } {
    const segments: string[] = [];
    for (const segment of path.split('/')) {
      if (segment === '' || segment === '.') continue;
      if (segment === '..') segments.pop();
      else segments.push(segment);
    }
    if (`/${segments[0]}` !== GITDIR) throw fsError('ENOENT', path);
    const inner = segments.slice(1).join('/');
    return { table: inner === 'objects' || inner.startsWith('objects/') ? this.objects : this.others, inner };
  }
}

function stats(type: 'file' | 'dir', size: number): Stats {
  return {
    type,
    mode: type === 'dir' ? 0o40755 : 0o100644,
    size,
    ino: 0,
    mtimeMs: 0,
    ctimeMs: 0,
    uid: 1,
    gid: 1,
    dev: 1,
    isFile: () => type === 'file',
    isDirectory: () => type === 'dir',
    isSymbolicLink: () => false,
  };
}

/** An error isomorphic-git recognises by its `code`, as Node's fs throws them. */
function fsError(code: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}

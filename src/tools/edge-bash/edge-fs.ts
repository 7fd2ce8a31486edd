// The edge engine's filesystem: just-bash's IFileSystem over a tree of directories (each a map of
// its children, so listing one costs its children only), file contents read on first use. It acts
// as a POSIX disk where just-bash's InMemoryFs does not: a write below a directory that does not
// exist fails (ENOENT) rather than making it, links are followed in every name of a path, a write
// through a link lands on its target, a hard link shares its file. Every change names the path it
// changed (`onChange`), so the copy (edge-copy.ts) compares only those with the manifest.
import type { BufferEncoding, CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from 'just-bash';
import { fromBytes, joined, lexical, toBytes } from './edge-fs-paths.ts';
import { exists, failure, isDirectory, noEntry, notDirectory } from './edge-fs-errors.ts';
import type { DirNode, FileNode, FsNode } from './edge-fs-nodes.ts';
import type { Located } from './edge-fs-ownership.ts';
import { EdgeTree } from './edge-fs-tree.ts';

export { MissingDirectoryError } from './edge-fs-errors.ts';
export type { EdgeReader } from './edge-fs-nodes.ts';
export type { EdgeFsOptions } from './edge-fs-tree.ts';

type DirentEntry = Awaited<ReturnType<NonNullable<IFileSystem['readdirWithFileTypes']>>>[number];
type ReadFileOptions = Exclude<Parameters<IFileSystem['readFile']>[1], BufferEncoding | undefined>;
type WriteFileOptions = Exclude<Parameters<IFileSystem['writeFile']>[2], BufferEncoding | undefined>;

export class EdgeFs extends EdgeTree implements IFileSystem {
  // --- Building (the copy of the workspace) ---
  // No writeFileSync here, on purpose: just-bash's constructor writes its /bin, /usr/bin, /dev and
  // /proc (about 180 files) into a filesystem that has one, on every command. The edge builds them
  // once (edge-layout.ts), and each workspace state's tree starts from them (edge-snapshot.ts).

  mkdirSync(path: string, options?: MkdirOptions): void {
    this.makeDirectory(lexical(path), options?.recursive ?? false, path);
  }

  // --- Reading ---

  async readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string> {
    return fromBytes(await this.bytesAt(path), encodingOf(options));
  }

  async readFileBytes(path: string): Promise<never> {
    return fromBytes(await this.bytesAt(path), 'latin1') as never;
  }

  /**
   * A copy of the file's bytes: the array a file holds may be shared (with the layout, with a
   * thread's kept contents, with the blob cache, with a file `cp` made), and a command given bytes
   * may change them in place. This is the one call that hands out a file's array.
   */
  async readFileBuffer(path: string): Promise<Uint8Array> {
    return (await this.bytesAt(path)).slice();
  }

  /** The array the file at `path` holds, for reading only (read as text, never handed out). */
  private bytesAt(path: string): Promise<Uint8Array> {
    const { node } = this.locate(lexical(path), true, 'open', path);
    if (node === undefined) throw noEntry('open', path);
    if (node.type === 'dir') throw failure('EISDIR', 'illegal operation on a directory', 'read', path);
    return this.contentOf(node as FileNode);
  }

  async exists(path: string): Promise<boolean> {
    if (path.includes('\0')) return false;
    try {
      return this.locate(lexical(path), true, 'access', path).node !== undefined;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    const { node } = this.locate(lexical(path), true, 'stat', path);
    if (node === undefined) throw noEntry('stat', path);
    return this.statOf(node);
  }

  async lstat(path: string): Promise<FsStat> {
    const { node } = this.locate(lexical(path), false, 'lstat', path);
    if (node === undefined) throw noEntry('lstat', path);
    return this.statOf(node);
  }

  async readdir(path: string): Promise<string[]> {
    return [...this.directory(path).children.keys()].sort(byName);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    const entries: DirentEntry[] = [];
    for (const [name, node] of this.directory(path).children)
      entries.push({
        name,
        isFile: node.type === 'file',
        isDirectory: node.type === 'dir',
        isSymbolicLink: node.type === 'symlink',
      });
    return entries.sort((a, b) => byName(a.name, b.name));
  }

  async readlink(path: string): Promise<string> {
    const { node } = this.locate(lexical(path), false, 'readlink', path);
    if (node === undefined) throw noEntry('readlink', path);
    if (node.type !== 'symlink') throw failure('EINVAL', 'invalid argument', 'readlink', path);
    return node.target;
  }

  async realpath(path: string): Promise<string> {
    const found = this.locate(lexical(path), true, 'realpath', path);
    if (found.node === undefined) throw noEntry('realpath', path);
    return found.path;
  }

  resolvePath(base: string, path: string): string {
    return path.startsWith('/') ? lexical(path) : lexical(base === '/' ? `/${path}` : `${base}/${path}`);
  }

  /** Every path the filesystem holds, parents before children. */
  getAllPaths(): string[] {
    const paths = ['/'];
    const walk = (dir: DirNode, at: string) => {
      for (const [name, node] of dir.children) {
        paths.push(`${at}/${name}`);
        if (node.type === 'dir') walk(node, `${at}/${name}`);
      }
    };
    walk(this.root, '');
    return paths;
  }

  /**
   * The entries below `path` (a directory, links not followed), each with its path relative to it,
   * parents first, and whether it is a file with another name too (ln).
   */
  *entriesBelow(path: string): Generator<{ path: string; type: 'dir' | 'file' | 'symlink'; hardLinked: boolean }> {
    const { node } = this.locate(lexical(path), false, 'scandir', path);
    if (node?.type !== 'dir') return;
    const stack: [DirNode, string][] = [[node, '']];
    while (stack.length > 0) {
      const [dir, at] = stack.pop()!;
      for (const [name, child] of dir.children) {
        const relative = at === '' ? name : `${at}/${name}`;
        yield { path: relative, type: child.type, hardLinked: child.type === 'file' && this.linked.has(child) };
        if (child.type === 'dir') stack.push([child, relative]);
      }
    }
  }

  // --- For the edge's own commands (edge-grep.ts): nodes walked rather than paths resolved ---

  /** What is at `path` (absolute), its last name not followed, as lstat finds it; undefined when nothing is. */
  nodeAt(path: string): FsNode | undefined {
    return this.locate(lexical(path), false, 'lstat', path).node;
  }

  /** Whether a node is a shared tree's (edge-snapshot.ts), which no command changes: what is derived from it holds for good. */
  shares(node: FsNode): boolean {
    return node.owner !== this;
  }

  /** A directory's children with their nodes, sorted by name as readdir sorts them. */
  childrenOf(dir: DirNode): readonly [string, FsNode][] {
    if (dir.owner === this) return [...dir.children].sort(([a], [b]) => byName(a, b));
    // A shared directory never changes: sorted once for every command over it.
    return (dir.sorted ??= [...dir.children].sort(([a], [b]) => byName(a, b)));
  }

  /**
   * Whether what is derived once from the shared tree's kept contents (grep's text of a walk) may
   * hold `bytes` more for the commands after this one, counted against the tree's budget when it
   * may; never without a shared tree.
   */
  keepShared(bytes: number): boolean {
    return this.base?.keep(bytes) ?? false;
  }

  /** Files' contents, in their order (read on first use): the arrays they hold, to be read and never changed. */
  heldContents(files: readonly FileNode[]): Promise<Uint8Array[]> {
    return this.contentsOf(files);
  }

  // --- Changing ---

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.write(lexical(path), toBytes(content, encodingOf(options)), false, path);
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    this.write(lexical(path), toBytes(content, encodingOf(options)), true, path, await this.loadedAt(path));
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    this.makeDirectory(lexical(path), options?.recursive ?? false, path);
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    const found = this.locate(lexical(path), false, 'rm', path, options?.force);
    if (found.node === undefined || found.parent === undefined) {
      if (options?.force && found.node === undefined) return;
      throw found.node === undefined ? noEntry('rm', path) : failure('EBUSY', 'resource busy', 'rm', path);
    }
    if (found.node.type === 'dir' && found.node.children.size > 0 && !options?.recursive)
      throw failure('ENOTEMPTY', 'directory not empty', 'rm', path);
    this.onChange(found.path);
    this.holder(found, path).children.delete(found.name);
    this.release(found.node);
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    // Without -r a link is copied as the file it points to (GNU cp); with -r, as a link (-P).
    const from = this.locate(lexical(src), !options?.recursive, 'cp', src);
    if (from.node === undefined) throw noEntry('cp', src);
    if (from.node.type === 'dir' && !options?.recursive) throw failure('EISDIR', 'is a directory', 'cp', src);
    const to = this.locate(lexical(dest), true, 'cp', dest);
    if (from.node.type === 'dir' && (to.path === from.path || to.path.startsWith(`${from.path}/`)))
      throw failure('EINVAL', `cannot copy '${src}' into itself`, 'cp', dest);
    await this.copyInto(from.node, to, dest);
  }

  async mv(src: string, dest: string): Promise<void> {
    const from = this.locate(lexical(src), false, 'mv', src);
    if (from.node === undefined || from.parent === undefined) throw noEntry('mv', src);
    const to = this.locate(lexical(dest), false, 'mv', dest);
    if (to.parent === undefined) throw failure('EBUSY', 'resource busy', 'mv', dest);
    if (to.path === from.path) return;
    if (from.node.type === 'dir' && to.path.startsWith(`${from.path}/`))
      throw failure('EINVAL', `cannot move '${src}' into itself`, 'mv', dest);
    if (to.node?.type === 'dir') {
      if (from.node.type !== 'dir') throw isDirectory('mv', dest);
      if (to.node.children.size > 0) throw failure('ENOTEMPTY', 'directory not empty', 'mv', dest);
    } else if (to.node !== undefined && from.node.type === 'dir') throw notDirectory('mv', dest);
    this.onChange(from.path);
    this.onChange(to.path);
    // Both directories made this filesystem's own before either changes (copying one never replaces the other).
    const fromDirectory = this.holder(from, src);
    const toDirectory = this.holder(to, dest);
    fromDirectory.children.delete(from.name);
    if (to.node !== undefined) this.release(to.node);
    toDirectory.children.set(to.name, from.node);
  }

  async chmod(path: string, mode: number): Promise<void> {
    const at = this.locate(lexical(path), true, 'chmod', path);
    if (at.node === undefined) throw noEntry('chmod', path);
    this.own({ ...at, node: at.node }).mode = mode;
  }

  async symlink(target: string, linkPath: string): Promise<void> {
    const at = this.locate(lexical(linkPath), false, 'symlink', linkPath);
    if (at.node !== undefined) throw exists('symlink', linkPath);
    this.onChange(at.path);
    this.holder(at, linkPath).children.set(at.name, this.linkNode(target));
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    const from = this.locate(lexical(existingPath), false, 'link', existingPath);
    const node = from.node;
    if (node === undefined) throw noEntry('link', existingPath);
    if (node.type !== 'file') throw failure('EPERM', 'operation not permitted', 'link', existingPath);
    const at = this.locate(lexical(newPath), false, 'link', newPath);
    if (at.node !== undefined) throw exists('link', newPath);
    this.onChange(at.path);
    // The same node under two names, this filesystem's own: a write through either is seen through both, as on a disk.
    const file = this.own({ ...from, node });
    this.linked.add(file);
    this.holder(at, newPath).children.set(at.name, file);
  }

  async utimes(path: string, _atime: Date, mtime: Date): Promise<void> {
    const at = this.locate(lexical(path), true, 'utimes', path);
    if (at.node === undefined) throw noEntry('utimes', path);
    this.own({ ...at, node: at.node }).mtime = mtime;
  }

  private async copyInto(node: FsNode, to: Located, dest: string): Promise<void> {
    if (node.type === 'dir') {
      if (to.node === undefined) this.makeDirectory(to.path, false, dest);
      else if (to.node.type !== 'dir') throw notDirectory('cp', dest);
      for (const [name, child] of [...node.children]) {
        const path = joined(to.path, name);
        await this.copyInto(child, this.locate(path, child.type !== 'symlink', 'cp', path), path);
      }
      return;
    }
    if (node.type === 'symlink') {
      if (to.node !== undefined) throw exists('cp', dest);
      this.onChange(to.path);
      this.holder(to, dest).children.set(to.name, this.linkNode(node.target));
      return;
    }
    this.write(to.path, await this.contentOf(node), false, dest);
  }
}

function encodingOf(options: ReadFileOptions | WriteFileOptions | BufferEncoding | null | undefined) {
  if (options === null || options === undefined) return undefined;
  return typeof options === 'string' ? options : (options.encoding ?? undefined);
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

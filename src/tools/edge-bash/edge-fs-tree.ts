// The edge engine's filesystem, its tree (edge-fs.ts gives it just-bash's IFileSystem): a tree of
// directories, each a map of its children, so listing one costs its children only; paths walked
// from the root with links followed as a disk follows them; every change reporting the path it
// changed. Its nodes and their contents, read on first use within a byte bound: edge-fs-nodes.ts.
import type { FsStat } from 'just-bash';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import { joined, lexical } from './edge-fs-paths.ts';
import {
  EdgeContents,
  type DirNode,
  type EdgeReader,
  type FileNode,
  type FsNode,
  type LinkNode,
} from './edge-fs-nodes.ts';

/** Linux's limit on links followed in one path (ELOOP beyond). */
const MAX_LINK_HOPS = 40;
export const DIR_MODE = 0o755;
export const FILE_MODE = 0o644;
export const LINK_MODE = 0o777;

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

export const failure = (code: string, text: string, op: string, path: string) =>
  Object.assign(new Error(`${code}: ${text}, ${op} '${path}'`), { code });
export const noEntry = (op: string, path: string) => failure('ENOENT', 'no such file or directory', op, path);
export const notDirectory = (op: string, path: string) => failure('ENOTDIR', 'not a directory', op, path);
export const isDirectory = (op: string, path: string) =>
  failure('EISDIR', 'illegal operation on a directory', op, path);
export const exists = (op: string, path: string) => failure('EEXIST', 'file already exists', op, path);

/** Where a path ends: the directory holding its last name, the name, and what is there (if anything). */
export interface Located {
  parent: DirNode | undefined;
  name: string;
  node: FsNode | undefined;
  /** The path with every link above its last name followed (and the last too when asked). */
  path: string;
}

export interface EdgeFsOptions {
  /** The most file bytes the filesystem holds (read or written); ENOSPC beyond. */
  maxTotalBytes?: number;
  /** Called with the physical path of everything a call changes (or may have changed, when it fails half-way). */
  onChange?: (path: string) => void;
  /** Where the contents of files added with addEntries come from. */
  reader?: EdgeReader;
}

export class EdgeTree extends EdgeContents {
  protected readonly root: DirNode;
  protected nextId = 1;
  protected readonly onChange: (path: string) => void;
  /** When the filesystem was made: the time of every entry copied in. */
  protected readonly made = new Date();

  constructor(options: EdgeFsOptions = {}) {
    super(options.maxTotalBytes ?? 1024 * 1024 * 1024, options.reader);
    this.onChange = options.onChange ?? (() => undefined);
    this.root = this.dirNode();
  }

  /**
   * The workspace's directories and files (not its links) below `at`, an existing directory, by
   * their manifest entries: contents read through the reader on first use. Nothing counts as changed.
   */
  addEntries(at: string, entries: Iterable<ManifestEntry>): void {
    const top = this.locate(lexical(at), true, 'mkdir', at).node;
    if (top?.type !== 'dir') throw notDirectory('mkdir', at);
    const dirs = new Map<string, DirNode>([['', top]]);
    const dirAt = (path: string): DirNode => {
      let dir = dirs.get(path);
      if (dir !== undefined) return dir;
      const slash = path.lastIndexOf('/');
      const parent = dirAt(slash < 0 ? '' : path.slice(0, slash));
      const name = slash < 0 ? path : path.slice(slash + 1);
      const there = parent.children.get(name);
      if (there?.type === 'dir') dir = there;
      else {
        dir = { type: 'dir', mode: DIR_MODE, mtime: this.made, id: this.nextId++, children: new Map() };
        parent.children.set(name, dir);
      }
      dirs.set(path, dir);
      return dir;
    };
    for (const entry of entries) {
      if (entry.type === 'dir') dirAt(entry.path);
      if (entry.type !== 'file') continue;
      const slash = entry.path.lastIndexOf('/');
      const home = dirAt(slash < 0 ? '' : entry.path.slice(0, slash));
      home.children.set(entry.path.slice(slash + 1), {
        type: 'file',
        mode: FILE_MODE,
        mtime: this.made,
        id: this.nextId++,
        content: undefined,
        load: undefined,
        entry,
        loadSize: entry.size,
        home,
      });
    }
  }

  // --- Inside ---

  /**
   * Walks `path` (absolute, normalized) from the root, following links in every name but the last
   * (and the last too when `follow`), each resolved from the directory holding it. A missing or
   * non-directory name above the last fails as the system fails (ENOENT, ENOTDIR), unless `lenient`
   * (rm -f), which answers "nothing there".
   */
  protected locate(path: string, follow: boolean, op: string, original: string, lenient = false): Located {
    if (original.includes('\0')) throw failure('ENOENT', 'path contains null byte', op, original);
    let names = path === '/' ? [] : path.slice(1).split('/');
    let dir = this.root;
    let at = '';
    let hops = 0;
    for (let index = 0; index < names.length;) {
      const name = names[index]!;
      const last = index === names.length - 1;
      const node = dir.children.get(name);
      if (node?.type === 'symlink' && (follow || !last)) {
        if (++hops > MAX_LINK_HOPS) throw failure('ELOOP', 'too many levels of symbolic links', op, original);
        const target = node.target.startsWith('/') ? node.target : `${at}/${node.target}`;
        names = [...lexical(target).split('/').filter(Boolean), ...names.slice(index + 1)];
        dir = this.root;
        at = '';
        index = 0;
        continue;
      }
      if (last || node === undefined) {
        if (!last) {
          if (lenient) return { parent: undefined, name, node: undefined, path: joined(at, name) };
          throw noEntry(op, original);
        }
        return { parent: dir, name, node, path: joined(at, name) };
      }
      if (node.type !== 'dir') {
        if (lenient) return { parent: undefined, name, node: undefined, path: joined(at, name) };
        throw notDirectory(op, original);
      }
      dir = node;
      at = joined(at, name);
      index += 1;
    }
    return { parent: undefined, name: '', node: this.root, path: '/' };
  }

  protected directory(path: string): DirNode {
    const { node } = this.locate(lexical(path), true, 'scandir', path);
    if (node === undefined) throw noEntry('scandir', path);
    if (node.type !== 'dir') throw notDirectory('scandir', path);
    return node;
  }

  /** The directory a new entry goes into (the root has no parent to hold it). */
  protected holder(at: Located, path: string): DirNode {
    if (at.parent === undefined) throw exists('open', path);
    return at.parent;
  }

  protected write(path: string, bytes: Uint8Array, append: boolean, original: string, loaded?: Uint8Array): void {
    let at: Located;
    try {
      at = this.locate(path, true, 'open', original);
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') throw new MissingDirectoryError(original);
      throw error;
    }
    if (at.node?.type === 'dir') throw isDirectory('open', original);
    const parent = this.holder(at, original);
    const file = at.node as FileNode | undefined;
    const before = append && file !== undefined ? (loaded ?? file.content ?? new Uint8Array()) : undefined;
    const size = (before?.byteLength ?? 0) + bytes.byteLength;
    this.reserve(size - (file?.content?.byteLength ?? 0));
    let content = bytes;
    if (before !== undefined && before.byteLength > 0) {
      content = new Uint8Array(size);
      content.set(before);
      content.set(bytes, before.byteLength);
    }
    this.onChange(at.path);
    if (file !== undefined) {
      file.content = content;
      file.load = undefined;
      file.entry = undefined;
      file.pending = undefined;
      file.mtime = new Date();
    } else parent.children.set(at.name, this.fileNode(content, undefined, undefined));
  }

  /** The content of a file at `path` before an append (read first when not yet read); nothing when there is none. */
  protected async loadedAt(path: string): Promise<Uint8Array | undefined> {
    try {
      const { node } = this.locate(lexical(path), true, 'open', path);
      return node?.type === 'file' ? await this.contentOf(node) : undefined;
    } catch {
      return undefined;
    }
  }

  protected makeDirectory(path: string, recursive: boolean, original: string): void {
    let at: Located;
    try {
      at = this.locate(path, true, 'mkdir', original);
    } catch (error) {
      if (!recursive || (error as { code?: string }).code !== 'ENOENT') throw error;
      this.makeDirectory(lexical(`${path}/..`), true, original);
      at = this.locate(path, true, 'mkdir', original);
    }
    if (at.node !== undefined) {
      if (at.node.type !== 'dir' || !recursive) throw exists('mkdir', original);
      return;
    }
    this.onChange(at.path);
    this.holder(at, original).children.set(at.name, this.dirNode());
  }

  protected makeParents(path: string): void {
    const slash = path.lastIndexOf('/');
    if (slash > 0) this.makeDirectory(path.slice(0, slash), true, path);
  }

  protected statOf(node: FsNode): FsStat {
    let size = 0;
    if (node.type === 'file') size = node.content?.byteLength ?? node.loadSize ?? 0;
    else if (node.type === 'symlink') size = node.target.length;
    return {
      isFile: node.type === 'file',
      isDirectory: node.type === 'dir',
      isSymbolicLink: node.type === 'symlink',
      mode: node.mode,
      size,
      mtime: node.mtime,
      identity: `edge:${node.id}`,
    };
  }

  /** Bytes a removed entry held, given back (a file with another name left keeps them). */
  protected release(node: FsNode): void {
    if (node.type === 'file') {
      if (!this.stillNamed(node)) this.retainedBytes -= node.content?.byteLength ?? 0;
    } else if (node.type === 'dir') for (const child of node.children.values()) this.release(child);
  }

  /** Whether a file is still reachable under another name (a hard link): rare, so it is looked for only then. */
  protected stillNamed(file: FileNode): boolean {
    return file.content !== undefined && this.linked.has(file) && this.reachable(this.root, file);
  }

  protected readonly linked = new WeakSet<FileNode>();

  protected reachable(dir: DirNode, file: FileNode): boolean {
    for (const child of dir.children.values())
      if (child === file || (child.type === 'dir' && this.reachable(child, file))) return true;
    return false;
  }

  // New nodes are written out name by name: on Node 20's V8 a spread followed by more names
  // (`{ ...meta, type }`) takes microseconds, and a command's filesystem makes hundreds of nodes.

  protected fileNode(
    content: Uint8Array | undefined,
    load: FileNode['load'],
    loadSize: number | undefined,
    mode = FILE_MODE,
    mtime = new Date(),
  ): FileNode {
    return { type: 'file', mode, mtime, id: this.nextId++, content, load, loadSize };
  }

  protected dirNode(mode = DIR_MODE, mtime = new Date()): DirNode {
    return { type: 'dir', mode, mtime, id: this.nextId++, children: new Map() };
  }

  protected linkNode(target: string, mode = LINK_MODE, mtime = new Date()): LinkNode {
    return { type: 'symlink', mode, mtime, id: this.nextId++, target };
  }
}

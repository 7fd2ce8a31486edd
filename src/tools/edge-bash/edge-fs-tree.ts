// The edge engine's filesystem, its tree (edge-fs.ts gives it just-bash's IFileSystem): a tree of
// directories, each a map of its children, so listing one costs its children only; paths walked
// from the root with links followed as a disk follows them; file contents read on first use (a
// directory's files together once a command reads two of them) and held within a byte bound;
// every change reporting the path it changed.
import type { FsStat } from 'just-bash';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import { joined, lexical } from './edge-fs-paths.ts';

/** Where the workspace's file contents come from: one at a time, or several in one call (a thread's round trip). */
export interface EdgeReader {
  read(path: string, entry: ManifestEntry): Promise<Uint8Array>;
  /** The contents of several files, in their order; a file that cannot be read fails the whole call. */
  readMany?(entries: readonly ManifestEntry[]): Promise<Uint8Array[]>;
}

export interface Meta {
  mode: number;
  mtime: Date;
  /** What stat answers as identity: the same for two names of one file (hard links). */
  readonly id: number;
}
export interface DirNode extends Meta {
  type: 'dir';
  children: Map<string, FsNode>;
  /** Files of the workspace read in it so far: from the second on, the rest are fetched together. */
  reads?: number;
}
export interface FileNode extends Meta {
  type: 'file';
  content: Uint8Array | undefined;
  /** Where the content comes from until it is read or replaced (a function, or the workspace's entry), and its size meanwhile. */
  load: (() => Promise<Uint8Array> | Uint8Array) | undefined;
  entry?: ManifestEntry;
  loadSize: number | undefined;
  /** The directory the workspace's file was copied into, whose other files are fetched with it. */
  home?: DirNode;
  /** The fetch of its content with others', which fills it in when it arrives; if it does not, the file is read alone. */
  pending?: Promise<void>;
}
export interface LinkNode extends Meta {
  type: 'symlink';
  target: string;
}
export type FsNode = DirNode | FileNode | LinkNode;

/** The most files, and bytes, fetched together when a command reads a directory's files one after another. */
const BATCH_FILES = 512;
const BATCH_BYTES = 4 * 1024 * 1024;

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

export class EdgeTree {
  protected readonly root: DirNode;
  protected nextId = 1;
  protected retainedBytes = 0;
  protected readonly maxTotalBytes: number;
  protected readonly onChange: (path: string) => void;
  protected readonly reader: EdgeReader | undefined;
  /** When the filesystem was made: the time of every entry copied in. */
  protected readonly made = new Date();

  constructor(options: EdgeFsOptions = {}) {
    this.maxTotalBytes = options.maxTotalBytes ?? 1024 * 1024 * 1024;
    this.onChange = options.onChange ?? (() => undefined);
    this.reader = options.reader;
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

  protected async contentOf(file: FileNode): Promise<Uint8Array> {
    if (file.content !== undefined) return file.content;
    const load = file.load;
    const entry = file.entry;
    if (entry !== undefined && file.pending === undefined) this.fetchAround(file);
    if (file.pending !== undefined) {
      await file.pending;
      if (file.content !== undefined) return file.content;
    }
    const content = entry !== undefined ? await this.reader!.read(entry.path, entry) : await load!();
    // Another read may have filled it meanwhile, or a write replaced it: that one stands.
    if (file.content !== undefined) return file.content;
    if (file.load === load && file.entry === entry) this.fill(file, content);
    return file.content ?? content;
  }

  /** A file's content read: held from now on, counted against the bound (ENOSPC beyond it). */
  private fill(file: FileNode, content: Uint8Array): void {
    this.reserve(content.byteLength);
    file.content = content;
    file.load = undefined;
    file.entry = undefined;
    file.pending = undefined;
    file.home = undefined;
  }

  /**
   * From the second file of the workspace a command reads in a directory on, the directory's other
   * unread files are fetched with it in one call (grep -r, cat *): one round trip per directory
   * rather than one per file, where each read crosses threads.
   */
  protected fetchAround(file: FileNode): void {
    const home = file.home;
    if (home === undefined || this.reader?.readMany === undefined) return;
    home.reads = (home.reads ?? 0) + 1;
    if (home.reads < 2) return;
    const batch: FileNode[] = [file];
    let bytes = file.loadSize ?? 0;
    for (const child of home.children.values()) {
      if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) break;
      if (child === file || child.type !== 'file' || child.entry === undefined || child.pending !== undefined) continue;
      batch.push(child);
      bytes += child.loadSize ?? 0;
    }
    if (batch.length < 2) return;
    this.fetchTogether(batch);
  }

  /**
   * The workspace's unread files among `files`, fetched together now, as many to a call as a
   * directory's are (grep -r reads them all next).
   */
  prefetch(files: Iterable<FileNode>): void {
    if (this.reader?.readMany === undefined) return;
    let batch: FileNode[] = [];
    let bytes = 0;
    for (const node of files) {
      if (node.entry === undefined || node.pending !== undefined) continue;
      batch.push(node);
      bytes += node.loadSize ?? 0;
      if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) {
        this.fetchTogether(batch);
        batch = [];
        bytes = 0;
      }
    }
    if (batch.length > 0) this.fetchTogether(batch);
  }

  /** One fetch for the batch, filling in each file it still names (one promise for all, not one a file). */
  private fetchTogether(batch: FileNode[]): void {
    const entries = batch.map((node) => node.entry!);
    const fetched = this.reader!.readMany!(entries).then(
      (contents) =>
        batch.forEach((node, index) => {
          // Written meanwhile, or over the bound: left to the file's own read, which reports it.
          if (node.entry !== entries[index] || node.content !== undefined) return;
          const content = contents[index]!;
          if (this.retainedBytes + content.byteLength <= this.maxTotalBytes) this.fill(node, content);
        }),
      () => undefined,
    );
    for (const node of batch) node.pending = fetched;
  }

  /**
   * The contents of `files`, in their order, as contentOf reads each: the fetches they wait on
   * awaited once each, rather than a promise a file (a grep -r reads thousands).
   */
  protected async contentsOf(files: readonly FileNode[]): Promise<Uint8Array[]> {
    const fetches = new Set<Promise<void>>();
    for (const file of files) if (file.content === undefined && file.pending !== undefined) fetches.add(file.pending);
    if (fetches.size > 0) await Promise.all(fetches);
    const contents: Uint8Array[] = [];
    for (const file of files) contents.push(file.content ?? (await this.contentOf(file)));
    return contents;
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

  protected reserve(bytes: number): void {
    if (bytes > 0 && this.retainedBytes + bytes > this.maxTotalBytes)
      throw new Error(`ENOSPC: in-memory filesystem byte limit exceeded (${this.maxTotalBytes} bytes)`);
    this.retainedBytes += bytes;
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

// The edge engine's filesystem, its tree (edge-fs.ts gives it just-bash's IFileSystem): a tree of
// directories, each a map of its children, so listing one costs its children only; paths walked
// from the root with links followed as a disk follows them; every change reporting the path it
// changed. Its nodes and their contents, read on first use within a byte bound: edge-fs-nodes.ts;
// the nodes it owns, made new or copied from a tree shared with other commands the first time it
// changes them: edge-fs-ownership.ts.
import type { FsStat } from 'just-bash';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import { exists, failure, isDirectory, MissingDirectoryError, noEntry, notDirectory } from './edge-fs-errors.ts';
import type { DirNode, EdgeReader, FileNode, FsNode, SharedTree } from './edge-fs-nodes.ts';
import { DIR_MODE, EdgeOwnership, FILE_MODE, type Located } from './edge-fs-ownership.ts';
import { joined, lexical } from './edge-fs-paths.ts';

/** Linux's limit on links followed in one path (ELOOP beyond). */
const MAX_LINK_HOPS = 40;

export interface EdgeFsOptions {
  /** The most file bytes the filesystem holds (read or written); ENOSPC beyond. */
  maxTotalBytes?: number;
  /** Called with the physical path of everything a call changes (or may have changed, when it fails half-way). */
  onChange?: (path: string) => void;
  /** Where the contents of files added with addEntries come from. */
  reader?: EdgeReader;
  /**
   * A tree to start from, shared with other commands' filesystems: this one copies only what it
   * changes, so its changes reach neither the shared tree nor them.
   */
  base?: SharedTree;
}

export class EdgeTree extends EdgeOwnership {
  protected readonly onChange: (path: string) => void;
  /** When the filesystem was made: the time of every entry copied in. */
  protected readonly made = new Date();

  constructor(options: EdgeFsOptions = {}) {
    super(options.maxTotalBytes ?? 1024 * 1024 * 1024, options.reader, options.base);
    this.onChange = options.onChange ?? (() => undefined);
  }

  /**
   * The workspace's directories and files (not its links) below `at`, an existing directory, by
   * their manifest entries: contents read through the reader on first use. Nothing counts as changed.
   */
  addEntries(at: string, entries: Iterable<ManifestEntry>): void {
    const top = this.locate(lexical(at), true, 'mkdir', at).node;
    if (top?.type !== 'dir') throw notDirectory('mkdir', at);
    this.ownable(top);
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
        this.ownable(parent);
        dir = { type: 'dir', mode: DIR_MODE, mtime: this.made, id: this.nextId++, owner: this, children: new Map() };
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
      this.ownable(home);
      home.children.set(entry.path.slice(slash + 1), {
        type: 'file',
        mode: FILE_MODE,
        mtime: this.made,
        id: this.nextId++,
        owner: this,
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

  protected write(path: string, bytes: Uint8Array, append: boolean, original: string, loaded?: Uint8Array): void {
    let at: Located;
    try {
      at = this.locate(path, true, 'open', original);
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') throw new MissingDirectoryError(original);
      throw error;
    }
    if (at.node?.type === 'dir') throw isDirectory('open', original);
    const file = at.node as FileNode | undefined;
    const before = append && file !== undefined ? (loaded ?? this.held(file) ?? new Uint8Array()) : undefined;
    const size = (before?.byteLength ?? 0) + bytes.byteLength;
    this.reserve(size - (file === undefined ? 0 : this.heldBytes(file)));
    let content = bytes;
    if (before !== undefined && before.byteLength > 0) {
      content = new Uint8Array(size);
      content.set(before);
      content.set(bytes, before.byteLength);
    }
    this.onChange(at.path);
    if (file !== undefined) {
      const own = this.own({ ...at, node: file });
      own.content = content;
      own.load = undefined;
      own.entry = undefined;
      own.home = undefined;
      own.mtime = new Date();
    } else this.holder(at, original).children.set(at.name, this.fileNode(content, undefined, undefined));
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
      if (node.owner !== this) this.releaseShared(node);
      else if (!this.stillNamed(node)) this.retainedBytes -= node.content?.byteLength ?? 0;
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
}

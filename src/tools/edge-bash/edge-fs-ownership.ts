// The edge engine's filesystem, the nodes it owns: made new, or copied from a shared tree on first change.
import { exists } from './edge-fs-errors.ts';
import {
  EdgeContents,
  type DirNode,
  type EdgeReader,
  type FileNode,
  type FsNode,
  type LinkNode,
  type SharedTree,
} from './edge-fs-nodes.ts';

export const DIR_MODE = 0o755;
export const FILE_MODE = 0o644;
export const LINK_MODE = 0o777;

/** Where a path ends: the directory holding its last name, the name, and what is there (if anything). */
export interface Located {
  parent: DirNode | undefined;
  name: string;
  node: FsNode | undefined;
  /** The path with every link above its last name followed (and the last too when asked). */
  path: string;
}

/**
 * A filesystem's root and the nodes it may change in place: its own, made new or copied from a tree
 * it shares with other commands' filesystems the first time it changes them, so that no change of
 * a command reaches the shared tree or another command.
 */
export class EdgeOwnership extends EdgeContents {
  protected readonly root: DirNode;
  protected nextId = 1;
  /** Given to other filesystems to start from (shared): never changed again. */
  private sharedOut = false;

  constructor(maxTotalBytes: number, reader: EdgeReader | undefined, base: SharedTree | undefined) {
    super(maxTotalBytes, reader, base);
    if (base === undefined) this.root = this.dirNode();
    else {
      this.nextId = base.nextId;
      this.root = this.ownCopy(base.root);
    }
  }

  /**
   * This tree, for other filesystems to start from (EdgeFsOptions.base): from now on nothing
   * changes it, and its files keep the contents `keep` allows.
   */
  shared(keep: SharedTree['keep']): SharedTree {
    this.sharedOut = true;
    return { root: this.root, nextId: this.nextId, keep };
  }

  // --- Copy on write: what a command changes is its own ---

  /** Fails where this filesystem may not change `node` in place: another's (shared) node, or any once this tree is shared. */
  protected ownable(node: FsNode): void {
    if (node.owner !== this || this.sharedOut)
      throw new Error('internal: a change reached a node another filesystem shares; it is copied first (own)');
  }

  /**
   * The directory a new entry goes into, or that holds `at`'s last name, as this filesystem's own,
   * to change: a shared one (and each shared directory above it) is copied in first. The root has
   * no parent to hold it.
   */
  protected holder(at: Located, path: string): DirNode {
    if (at.parent === undefined) throw exists('open', path);
    // A node of its own sits only below directories of its own: every node put into a directory is put into one of its own.
    if (at.parent.owner === this) return this.checked(at.parent);
    return this.ownDirectory(at.path.slice(0, at.path.lastIndexOf('/')) || '/');
  }

  /** The node at `at` as this filesystem's own, to change: a shared one is copied into its (own) directory first. */
  protected own<Node extends FsNode>(at: Located & { node: Node }): Node {
    if (at.node.owner === this) return this.checked(at.node);
    const parent = this.holder(at, at.path);
    const copy = this.ownCopy(at.node);
    parent.children.set(at.name, copy);
    return copy;
  }

  /** The directory at the physical path `path` (links followed), as this filesystem's own: see holder. */
  private ownDirectory(path: string): DirNode {
    let dir = this.checked(this.root);
    if (path === '/') return dir;
    for (const name of path.slice(1).split('/')) {
      const child = dir.children.get(name);
      if (child?.type !== 'dir') throw new Error(`internal: ${path} is not a directory to copy`);
      if (child.owner === this) dir = child;
      else {
        const copy = this.ownCopy(child);
        dir.children.set(name, copy);
        dir = copy;
      }
    }
    return dir;
  }

  private checked<Node extends FsNode>(node: Node): Node {
    this.ownable(node);
    return node;
  }

  /**
   * A shared node's copy, this filesystem's own: the same identity (stat's), mode and time; a
   * directory's children still the shared ones until they change; a file's content the one this
   * filesystem holds for it, or read on first use.
   */
  private ownCopy<Node extends FsNode>(node: Node): Node {
    const { mode, mtime, id } = node;
    if (node.type === 'dir')
      return { type: 'dir', mode, mtime, id, owner: this, children: new Map(node.children) } as DirNode as Node;
    if (node.type === 'symlink')
      return { type: 'symlink', mode, mtime, id, owner: this, target: node.target } as LinkNode as Node;
    const { content, load, entry, loadSize, home } = this.heldForCopy(node);
    return { type: 'file', mode, mtime, id, owner: this, content, load, loadSize, entry, home } as FileNode as Node;
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
    return { type: 'file', mode, mtime, id: this.nextId++, owner: this, content, load, loadSize };
  }

  protected dirNode(mode = DIR_MODE, mtime = new Date()): DirNode {
    return { type: 'dir', mode, mtime, id: this.nextId++, owner: this, children: new Map() };
  }

  protected linkNode(target: string, mode = LINK_MODE, mtime = new Date()): LinkNode {
    return { type: 'symlink', mode, mtime, id: this.nextId++, owner: this, target };
  }
}

// The edge engine's filesystem, its nodes and their contents (edge-fs-tree.ts builds the tree of
// them): a file's content read on first use, alone or fetched with the rest of its directory (or
// with every file a grep -r walks) in one call, and every byte held counted against a bound. A
// command's filesystem may start from a tree shared with other commands (edge-snapshot.ts): it
// changes none of that tree's nodes, and counts what it reads of them as its own.
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';

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
  /**
   * The filesystem that may change the node in place. Any other's node (a shared tree's) is copied
   * into the filesystem, with the directories above it, before the filesystem changes it
   * (EdgeOwnership.own), so a command's change reaches neither the shared tree nor another command.
   */
  readonly owner: object;
}
export interface DirNode extends Meta {
  type: 'dir';
  children: Map<string, FsNode>;
  /** A shared directory's children sorted by name, made once: its children never change. */
  sorted?: readonly [string, FsNode][];
}
export interface FileNode extends Meta {
  type: 'file';
  /**
   * The content once read or written. A shared file's is its workspace blob's bytes, kept (within
   * the shared tree's budget) for every command over the tree, each counting it when it reads it.
   */
  content: Uint8Array | undefined;
  /** Where the content comes from until it is read or replaced (a function, or the workspace's entry), and its size meanwhile. */
  load: (() => Promise<Uint8Array> | Uint8Array) | undefined;
  entry?: ManifestEntry;
  loadSize: number | undefined;
  /** The directory the workspace's file was copied into, whose other files are fetched with it. */
  home?: DirNode;
}
export interface LinkNode extends Meta {
  type: 'symlink';
  target: string;
}
export type FsNode = DirNode | FileNode | LinkNode;

/** A tree shared by the filesystems of several commands, none of which changes its nodes (edge-snapshot.ts). */
export interface SharedTree {
  readonly root: DirNode;
  /** The id a new node takes first: those below are the tree's. */
  readonly nextId: number;
  /**
   * Whether one of the tree's files may keep `bytes` of its workspace content for the commands
   * after this one (counted against the tree's budget when it may).
   */
  keep(bytes: number): boolean;
}

/** The most files, and bytes, fetched together when a command reads a directory's files one after another. */
const BATCH_FILES = 512;
const BATCH_BYTES = 4 * 1024 * 1024;

/** A filesystem's file contents: read through its reader on first use, held within its byte bound. */
export class EdgeContents {
  protected retainedBytes = 0;
  protected readonly maxTotalBytes: number;
  protected readonly reader: EdgeReader | undefined;
  /** The tree this filesystem starts from, shared with other commands' filesystems. */
  protected readonly base: SharedTree | undefined;
  /**
   * The shared tree's files whose contents this filesystem holds, each counted against its bound
   * once: a bit by id (the tree's ids are below its nextId), as a grep -r holds thousands.
   */
  private counted: Uint8Array | undefined;
  /** Contents of shared files this filesystem holds that the tree could not keep (over its budget). */
  private readonly unkept = new Map<FileNode, Uint8Array>();
  /** Fetches of contents with others' under way: each fills its files in when it arrives; a file it does not fill is read alone. */
  private readonly pending = new Map<FileNode, Promise<void>>();
  /** Files of the workspace read so far in each directory: from the second on, the rest are fetched together. */
  private readonly reads = new Map<DirNode, number>();

  constructor(maxTotalBytes: number, reader: EdgeReader | undefined, base: SharedTree | undefined) {
    this.maxTotalBytes = maxTotalBytes;
    this.reader = reader;
    this.base = base;
  }

  /**
   * The content this filesystem holds for a file without reading it: a shared file's content kept
   * in the tree is counted against the bound the first time this filesystem takes it.
   */
  protected held(file: FileNode): Uint8Array | undefined {
    if (file.owner === this) return file.content;
    if (this.isCounted(file)) return file.content ?? this.unkept.get(file);
    const kept = file.content;
    if (kept === undefined) return undefined;
    this.reserve(kept.byteLength);
    this.count(file, true);
    return kept;
  }

  /** Whether a file's content is in memory (for this filesystem or in the shared tree), so not to be fetched. */
  private has(file: FileNode): boolean {
    return file.content !== undefined || (file.owner !== this && this.isCounted(file));
  }

  /** The bytes a file's content counts against this filesystem's bound. */
  protected heldBytes(file: FileNode): number {
    if (file.owner === this) return file.content?.byteLength ?? 0;
    return this.isCounted(file) ? (file.content ?? this.unkept.get(file))!.byteLength : 0;
  }

  /** A shared file no longer in this filesystem (removed, or replaced by its copy): its content no longer counted. */
  protected releaseShared(file: FileNode): Uint8Array | undefined {
    if (!this.isCounted(file)) return undefined;
    const content = (file.content ?? this.unkept.get(file))!;
    this.retainedBytes -= content.byteLength;
    this.count(file, false);
    this.unkept.delete(file);
    return content;
  }

  /**
   * What a shared file's copy, this filesystem's own, starts with: the content it held for the
   * shared file (counted again as the copy's), or where to read it from.
   */
  protected heldForCopy(file: FileNode): Pick<FileNode, 'content' | 'load' | 'entry' | 'loadSize' | 'home'> {
    const content = this.releaseShared(file);
    if (content === undefined)
      return { content: undefined, load: file.load, entry: file.entry, loadSize: file.loadSize, home: file.home };
    this.retainedBytes += content.byteLength;
    return { content, load: undefined, entry: undefined, loadSize: undefined, home: undefined };
  }

  private isCounted(file: FileNode): boolean {
    const byte = this.counted?.[file.id >> 3];
    return byte !== undefined && (byte & (1 << (file.id & 7))) !== 0;
  }

  private count(file: FileNode, counted: boolean): void {
    const at = file.id >> 3;
    if (this.counted === undefined || at >= this.counted.length) {
      const grown = new Uint8Array(Math.max(at + 1, ((this.base?.nextId ?? 0) >> 3) + 1));
      if (this.counted !== undefined) grown.set(this.counted);
      this.counted = grown;
    }
    if (counted) this.counted[at]! |= 1 << (file.id & 7);
    else this.counted[at]! &= ~(1 << (file.id & 7));
  }

  protected async contentOf(file: FileNode): Promise<Uint8Array> {
    const held = this.held(file);
    if (held !== undefined) return held;
    const load = file.load;
    const entry = file.entry;
    if (entry !== undefined && !this.pending.has(file)) this.fetchAround(file);
    const pending = this.pending.get(file);
    if (pending !== undefined) {
      await pending;
      const fetched = this.held(file);
      if (fetched !== undefined) return fetched;
    }
    const content = entry !== undefined ? await this.reader!.read(entry.path, entry) : await load!();
    // Another read may have filled it meanwhile, or a write replaced it: that one stands.
    const meanwhile = this.held(file);
    if (meanwhile !== undefined) return meanwhile;
    if (file.load === load && file.entry === entry) this.fill(file, content);
    return this.held(file) ?? content;
  }

  /** A file's content read: held from now on, counted against the bound (ENOSPC beyond it). */
  private fill(file: FileNode, content: Uint8Array): void {
    this.reserve(content.byteLength);
    this.pending.delete(file);
    if (file.owner !== this) {
      this.count(file, true);
      if (!this.share(file, content)) this.unkept.set(file, content);
      return;
    }
    file.content = content;
    file.load = undefined;
    file.entry = undefined;
    file.home = undefined;
  }

  /**
   * A shared file's workspace content kept in the shared tree, within its budget, for the commands
   * after this one: the same blob's bytes for every command over the tree. Only the workspace's
   * contents (an entry's blob), never what a loader gives (the interpreter's /proc).
   */
  private share(file: FileNode, content: Uint8Array): boolean {
    if (file.entry === undefined || file.content !== undefined || !this.base?.keep(content.byteLength)) return false;
    file.content = content;
    return true;
  }

  /**
   * From the second file of the workspace a command reads in a directory on, the directory's other
   * unread files are fetched with it in one call (grep -r, cat *): one round trip per directory
   * rather than one per file, where each read crosses threads.
   */
  protected fetchAround(file: FileNode): void {
    const home = file.home;
    if (home === undefined || this.reader?.readMany === undefined) return;
    const reads = (this.reads.get(home) ?? 0) + 1;
    this.reads.set(home, reads);
    if (reads < 2) return;
    const batch: FileNode[] = [file];
    let bytes = file.loadSize ?? 0;
    for (const child of home.children.values()) {
      if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) break;
      if (child === file || child.type !== 'file' || !this.unfetched(child)) continue;
      batch.push(child);
      bytes += child.loadSize ?? 0;
    }
    if (batch.length < 2) return;
    this.fetchTogether(batch);
  }

  /** Whether a file is the workspace's, not yet in memory, and not being fetched. */
  private unfetched(file: FileNode): boolean {
    return file.entry !== undefined && !this.pending.has(file) && !this.has(file);
  }

  /**
   * The workspace's unread files among `files`, fetched together now, as many to a call as a
   * directory's are (grep -r reads them all next).
   */
  prefetch(files: readonly FileNode[]): void {
    if (this.reader?.readMany === undefined) return;
    let batch: FileNode[] = [];
    let bytes = 0;
    for (let index = 0; index < files.length; index += 1) {
      const node = files[index]!;
      if (!this.unfetched(node)) continue;
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
          if (node.entry !== entries[index] || this.has(node)) return;
          const content = contents[index]!;
          // Kept in the shared tree: counted when this command reads it.
          if (node.owner !== this && this.share(node, content)) return;
          if (this.retainedBytes + content.byteLength <= this.maxTotalBytes) this.fill(node, content);
        }),
      () => undefined,
    );
    for (const node of batch) this.pending.set(node, fetched);
  }

  /**
   * The contents of `files`, in their order, as contentOf reads each: the fetches they wait on
   * awaited once each, rather than a promise a file (a grep -r reads thousands).
   */
  protected async contentsOf(files: readonly FileNode[]): Promise<Uint8Array[]> {
    // Indexed loops, here and in prefetch: a grep -r passes thousands of files, and an iterator's
    // results are garbage collected by the thousand.
    const fetches = new Set<Promise<void>>();
    if (this.pending.size > 0)
      for (let index = 0; index < files.length; index += 1) {
        const fetch = this.pending.get(files[index]!);
        if (fetch !== undefined && !this.has(files[index]!)) fetches.add(fetch);
      }
    if (fetches.size > 0) await Promise.all(fetches);
    const contents = new Array<Uint8Array>(files.length);
    for (let index = 0; index < files.length; index += 1) {
      const file = files[index]!;
      contents[index] = this.held(file) ?? (await this.contentOf(file));
    }
    return contents;
  }

  protected reserve(bytes: number): void {
    if (bytes > 0 && this.retainedBytes + bytes > this.maxTotalBytes)
      throw new Error(`ENOSPC: in-memory filesystem byte limit exceeded (${this.maxTotalBytes} bytes)`);
    this.retainedBytes += bytes;
  }
}

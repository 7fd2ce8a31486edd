// The edge engine's filesystem, its nodes and their contents (edge-fs-tree.ts builds the tree of
// them): a file's content read on first use, alone or fetched with the rest of its directory (or
// with every file a grep -r walks) in one call, and every byte held counted against a bound.
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

/** A filesystem's file contents: read through its reader on first use, held within its byte bound. */
export class EdgeContents {
  protected retainedBytes = 0;
  protected readonly maxTotalBytes: number;
  protected readonly reader: EdgeReader | undefined;

  constructor(maxTotalBytes: number, reader: EdgeReader | undefined) {
    this.maxTotalBytes = maxTotalBytes;
    this.reader = reader;
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

  protected reserve(bytes: number): void {
    if (bytes > 0 && this.retainedBytes + bytes > this.maxTotalBytes)
      throw new Error(`ENOSPC: in-memory filesystem byte limit exceeded (${this.maxTotalBytes} bytes)`);
    this.retainedBytes += bytes;
  }
}

// A workspace directory as a tar stream: entries in path order, files' contents read a few ahead of the reader.
import type { BodyPieces, PieceSink } from '../core/body-pieces.ts';
import { ToolError } from '../core/errors.ts';
import { relativeLinkTarget } from '../core/link-target.ts';
import type { ManifestEntry } from './manifest.ts';
import {
  paddedSize,
  TAR_BLOCK,
  TAR_END,
  tarHeaderBlocks,
  tarHeaderLength,
  writeTarHeader,
  type TarHeaderFields,
} from './tar-headers.ts';
import type { Workspace } from './workspace.ts';

/** The manifest keeps no modes, so every file is 0644, every directory 0755, every link 0777 (as `ln -s` makes them). */
const FILE_MODE = 0o644;
const DIRECTORY_MODE = 0o755;
const LINK_MODE = 0o777;

/** Contents read ahead of the reader: at most this many files and bytes (a larger file is read alone). */
const READS_AHEAD = 64;
const BYTES_AHEAD = 8 * 1024 * 1024;
/**
 * Headers and small contents go out together in chunks of this size, each filled: every chunk is
 * new memory (the socket may still hold the last), which costs more to make than what is written
 * into it (page faults, and the collections that external memory brings on: an archive of 7.7 MB
 * sent in chunks half filled made 15 MB of them, about 70 ms of CPU a download on this machine).
 */
export const CHUNK_BYTES = 128 * 1024;
/**
 * Chunks made ahead of the reader: the next is written while the socket sends the last, rather
 * than only once the client has taken it (made one at a time, a download of 7.7 MB took 182 ms
 * against the server's 97 ms of CPU).
 */
const CHUNKS_AHEAD = 4;
const EMPTY = new Uint8Array(0);

/**
 * The tar of everything below the resolved directory `root`, named relative to it: directories
 * (empty ones too) as directory entries, symlinks as links, files with their bytes. The entries
 * are those of the moment it is called; contents (which never change) are read as the reader
 * takes the archive, a bounded number ahead of it, so memory holds a few megabytes whatever the
 * workspace's size.
 */
export function packArchive(workspace: Workspace, root: string, mtime: Date): ReadableStream<Uint8Array> {
  const tar = new TarChunks(workspace, root, mtime);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!(await tar.pull((bytes) => controller.enqueue(bytes)))) controller.close();
      },
      cancel() {
        tar.stop();
      },
    },
    { highWaterMark: CHUNKS_AHEAD },
  );
}

/**
 * The tar of `packArchive` in pieces (see PieceSink): headers and small contents are written into
 * chunks of CHUNK_BYTES, each sent once full, and a large content is sent as it is. A chunk comes
 * from `newChunk`, all zeros (the padding), taken only when something is written into it. A
 * sender that knows when a chunk it sent is no longer held (the Node home's socket) may zero it
 * and give it out again, so a download makes no new memory for each chunk: new memory cost more
 * than what is written into it (page faults, and the collections external memory brings on).
 */
export class TarChunks implements BodyPieces {
  private readonly entries: readonly ManifestEntry[];
  private readonly contents: ReadAhead;
  private next = 0;
  private chunk: Uint8Array = EMPTY;
  private at = 0;
  private sink: PieceSink | undefined;
  private sent = false;

  constructor(
    private readonly workspace: Workspace,
    private readonly root: string,
    private readonly mtime: Date,
    private readonly newChunk: () => Uint8Array = () => new Uint8Array(CHUNK_BYTES),
  ) {
    this.entries = workspace.entriesBelow(root);
    this.contents = new ReadAhead(workspace, this.entries);
  }

  /** The whole tar's length, known before it is written (a Content-Length): each entry's header blocks and padded content, and the end. */
  get byteLength(): number {
    let length = TAR_END.byteLength;
    for (const entry of this.entries) {
      const header = tarHeader(entry, this.name(entry.path), this.mtime);
      length += tarHeaderLength(header) + (entry.type === 'file' ? paddedSize(entry.size) : 0);
    }
    return length;
  }

  async pull(sink: PieceSink): Promise<boolean> {
    const entries = this.entries;
    this.sink = sink;
    this.sent = false;
    while (this.next < entries.length && !this.sent) {
      const entry = entries[this.next]!;
      const header = tarHeader(entry, this.name(entry.path), this.mtime);
      this.room(TAR_BLOCK);
      let end = writeTarHeader(this.chunk, this.at, header);
      if (end === undefined) {
        this.flush();
        this.room(TAR_BLOCK);
        end = writeTarHeader(this.chunk, this.at, header);
        // A header longer than a chunk (a pax record of a huge name) goes out alone.
        if (end === undefined) this.send(tarHeaderBlocks(header), undefined);
      }
      this.at = end ?? 0;
      if (entry.type === 'file' && entry.size > 0) {
        const content = this.workspace.cachedBytes(entry.path, entry) ?? (await this.contents.take(this.next));
        // The header gave the manifest's size: a content of another size would corrupt every entry after it.
        if (content.byteLength !== entry.size)
          throw new ToolError('internal', `The content of ${entry.path} is not the size its entry records.`, {
            path: entry.path,
          });
        const padded = paddedSize(content.byteLength);
        if (padded <= CHUNK_BYTES / 2) {
          this.room(padded);
          this.chunk.set(content, this.at);
          this.at += padded;
        } else {
          // A large content goes out as it is, not copied into a chunk, then its padding.
          this.flush();
          this.send(content, undefined);
          if (padded > content.byteLength) {
            this.room(TAR_BLOCK);
            this.at = padded - content.byteLength;
          }
        }
      }
      this.next += 1;
    }
    if (this.next < entries.length) return true;
    this.room(TAR_END.byteLength);
    this.at += TAR_END.byteLength;
    this.flush();
    return false;
  }

  stop(): void {
    this.contents.stop();
  }

  private name(path: string): string {
    return this.root === '' ? path : path.slice(this.root.length + 1);
  }

  private send(bytes: Uint8Array, chunk: Uint8Array | undefined): void {
    this.sink!(bytes, chunk);
    this.sent = true;
  }

  /** Sends the chunk being written, if anything is in it. */
  private flush(): void {
    if (this.at > 0) this.send(this.chunk.subarray(0, this.at), this.chunk);
    this.chunk = EMPTY;
    this.at = 0;
  }

  /** Makes room for `bytes` in the chunk being written: the one there, or a new one once it is sent. */
  private room(bytes: number): void {
    if (this.at + bytes > this.chunk.byteLength) this.flush();
    if (this.chunk === EMPTY) this.chunk = this.newChunk();
  }
}

/**
 * The contents of a list of entries, read a bounded number ahead of the one taken. Contents in
 * memory are left to the reader, which takes them without waiting: a promise and a turn of the
 * event loop for each of thousands of small files cost more than the rest of the archive.
 */
class ReadAhead {
  private readonly reads = new Map<number, Promise<Uint8Array>>();
  private readonly sizes = new Map<number, number>();
  private started = 0;
  private bytes = 0;
  private stopped = false;

  constructor(
    private readonly workspace: Workspace,
    private readonly entries: readonly ManifestEntry[],
  ) {}

  /** The content of entry `index` (a file), starting the reads of those after it as the bounds allow. */
  async take(index: number): Promise<Uint8Array> {
    this.fill(index);
    const read = this.reads.get(index) ?? this.read(index);
    this.reads.delete(index);
    const content = await read;
    this.bytes -= this.sizes.get(index) ?? 0;
    this.sizes.delete(index);
    this.fill(index + 1);
    return content;
  }

  stop(): void {
    this.stopped = true;
  }

  private fill(from: number): void {
    if (this.started < from) this.started = from;
    while (!this.stopped && this.started < this.entries.length && this.reads.size < READS_AHEAD) {
      const entry = this.entries[this.started]!;
      if (entry.type !== 'file' || entry.size === 0 || this.workspace.cachedBytes(entry.path, entry) !== undefined) {
        this.started += 1;
        continue;
      }
      if (this.reads.size > 0 && this.bytes + entry.size > BYTES_AHEAD) return;
      this.bytes += entry.size;
      this.sizes.set(this.started, entry.size);
      const read = this.read(this.started);
      // Failures reach the reader when it takes this entry; unread ones are dropped with the stream.
      read.catch(() => undefined);
      this.reads.set(this.started, read);
      this.started += 1;
    }
  }

  private read(index: number): Promise<Uint8Array> {
    const entry = this.entries[index]!;
    return this.workspace.readBytes(entry.path, entry);
  }
}

function tarHeader(entry: ManifestEntry, name: string, mtime: Date): TarHeaderFields {
  if (entry.type === 'dir') return { name: `${name}/`, type: 'directory', size: 0, mode: DIRECTORY_MODE, mtime };
  if (entry.type === 'symlink')
    return { name, type: 'symlink', size: 0, linkname: diskTarget(entry), mode: LINK_MODE, mtime };
  return { name, type: 'file', size: entry.size, mode: FILE_MODE, mtime };
}

/**
 * A link's target as it must read on a disk, where a leading `/` is the host's root: a relative
 * target as stored, an absolute one (workspace-absolute here) made relative to the link, or, when
 * it leaves the workspace, climbing out of the root, so that no archive of ours names a host path.
 */
function diskTarget(entry: ManifestEntry): string {
  const target = entry.target ?? '';
  if (!target.startsWith('/')) return target;
  const depth = entry.path.split('/').length - 1;
  return relativeLinkTarget(entry.path, target) ?? `${'../'.repeat(depth)}${target.replace(/^\/+/, '')}`;
}

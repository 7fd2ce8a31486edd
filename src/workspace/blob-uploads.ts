// Blobs a runner uploads in pieces, each within the request body limit: pieces are staged as
// objects beside the workspace's blobs, never held in memory between requests, and the blob is
// stored under its verified SHA-256 once the last piece is in.
import { ToolError } from '../core/errors.ts';
import { deletePrefix, type ObjectStore } from '../storage/object-store.ts';
import { sha256Hex } from '../core/content-hash.ts';

/** One piece of an upload: `bytes` go at `offset` of the blob `hash`, which is `size` bytes in all. */
export interface UploadPiece {
  /** Who uploads it (a process): its staged pieces are removed together, and once it can upload no more. */
  owner: string;
  hash: string;
  size: number;
  offset: number;
  bytes: Uint8Array;
}

export interface UploadProgress {
  /** Bytes held from the blob's start: the next piece goes at this offset. */
  received: number;
  /** The blob is stored, and a sync may name it. */
  complete: boolean;
}

/** A staged piece: where it starts, and its object. */
interface StagedPiece {
  offset: number;
  size: number;
  key: string;
}

/** Offsets padded so that the store's key order is their numeric order. */
const OFFSET_DIGITS = 15;

/** Where a complete upload goes: the workspace's blob store (a port, so the store and its uploads import no cycle). */
export interface BlobSink {
  size(store: string, hash: string): Promise<number | undefined>;
  put(store: string, bytes: Uint8Array): Promise<string>;
}

/** The uploads of one workspace incarnation. */
export class BlobUploads {
  constructor(
    private readonly objects: ObjectStore,
    private readonly blobs: BlobSink,
    private readonly storeId: string,
  ) {}

  /**
   * Takes one piece. Pieces go in order, each where the previous ended, so what is staged never
   * exceeds the blob's size; a piece already held (a retry) changes nothing. A blob in one piece
   * is stored at once, without staging.
   */
  async receive(piece: UploadPiece): Promise<UploadProgress> {
    const { hash, size, offset, bytes } = piece;
    const end = offset + bytes.byteLength;
    if (end > size)
      throw new ToolError('invalid_argument', `The piece ends at byte ${end}, past the blob's size of ${size} bytes.`, {
        offset,
        size,
      });
    if (offset === 0 && end === size) {
      await this.store(hash, bytes);
      return { received: size, complete: true };
    }
    if (bytes.byteLength === 0)
      throw new ToolError('invalid_argument', 'A piece of a blob sent in pieces must hold at least one byte.', {
        offset,
        size,
      });
    const prefix = this.ownerPrefix(piece.owner) + `${hash}/`;
    const staged = await this.held(prefix);
    let received = staged.reduce((sum, held) => sum + held.size, 0);
    if (end > received) {
      if (offset !== received) {
        // The last piece came before and the blob was stored: its staging is gone, the blob is there.
        if (received === 0 && (await this.blobs.size(this.storeId, hash)) === size)
          return { received: size, complete: true };
        throw new ToolError(
          'invalid_argument',
          `Send the piece at offset ${received}: the pieces of a blob go in order, each where the previous ended.`,
          { offset, received },
        );
      }
      const key = prefix + String(offset).padStart(OFFSET_DIGITS, '0');
      await this.objects.put(key, bytes);
      staged.push({ offset, size: bytes.byteLength, key });
      received = end;
    }
    if (received < size) return { received, complete: false };
    await this.assemble(prefix, hash, size, staged);
    return { received: size, complete: true };
  }

  /** Removes what `owner` staged. */
  async discard(owner: string): Promise<void> {
    await deletePrefix(this.objects, this.ownerPrefix(owner));
  }

  /** Removes the staged pieces of every owner that can upload no more (its lease is gone), so abandoned uploads do not stay. */
  async discardAbandoned(uploading: (owner: string) => boolean): Promise<void> {
    const prefix = this.ownerPrefix('');
    let cursor: string | undefined;
    do {
      const page = await this.objects.list(prefix, cursor === undefined ? {} : { cursor });
      const abandoned = page.objects.filter((object) => !uploading(object.key.slice(prefix.length).split('/')[0]!));
      await Promise.all(abandoned.map((object) => this.objects.delete(object.key)));
      cursor = page.cursor;
    } while (cursor !== undefined);
  }

  /**
   * Joins the pieces into the blob and stores it when its hash is the id it was sent under; the
   * staging goes either way but for a store that failed, so a retried last piece tries again.
   */
  private async assemble(prefix: string, hash: string, size: number, staged: readonly StagedPiece[]): Promise<void> {
    const whole = new Uint8Array(size);
    for (const piece of staged) {
      const object = await this.objects.get(piece.key);
      if (!object || object.body.byteLength !== piece.size) {
        await deletePrefix(this.objects, prefix);
        throw new ToolError(
          'unavailable',
          'A staged piece of the upload is gone; upload the blob again from offset 0.',
          { blob: hash },
        );
      }
      whole.set(object.body, piece.offset);
    }
    try {
      await this.store(hash, whole);
    } catch (error) {
      if (error instanceof ToolError && error.code === 'invalid_argument') await deletePrefix(this.objects, prefix);
      throw error;
    }
    await deletePrefix(this.objects, prefix);
  }

  /** Stores the bytes when they hash to `hash`; else nothing is stored. */
  private async store(hash: string, bytes: Uint8Array): Promise<void> {
    const actual = await sha256Hex(bytes);
    if (actual !== hash) {
      throw new ToolError(
        'invalid_argument',
        `The uploaded bytes hash to ${actual}, not to the blob id ${hash}; nothing is stored. Send the SHA-256 of the whole content as its id.`,
        {
          blob: hash,
          actual,
        },
      );
    }
    await this.blobs.put(this.storeId, bytes);
  }

  /** The pieces staged under `prefix` that run on from byte 0 without a gap. */
  private async held(prefix: string): Promise<StagedPiece[]> {
    const pieces: StagedPiece[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.objects.list(prefix, cursor === undefined ? {} : { cursor });
      for (const object of page.objects)
        pieces.push({ offset: Number(object.key.slice(prefix.length)), size: object.size, key: object.key });
      cursor = page.cursor;
    } while (cursor !== undefined);
    const contiguous: StagedPiece[] = [];
    let next = 0;
    for (const piece of pieces.sort((a, b) => a.offset - b.offset)) {
      if (piece.offset !== next) break;
      contiguous.push(piece);
      next += piece.size;
    }
    return contiguous;
  }

  private ownerPrefix(owner: string): string {
    return `ws/${this.storeId}/uploads/${owner}${owner === '' ? '' : '/'}`;
  }
}

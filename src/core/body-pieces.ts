// A response body made in pieces as its sender takes them, in chunks the sender may give back once sent (an archive is sent so).

/**
 * Where a body's pieces go, in order. `chunk` is the chunk (of the body's `newChunk`) that a piece
 * lies in, which the sender may zero and give out again once it no longer holds the piece;
 * undefined for a piece that is not in one, which the sender must leave as it is.
 */
export type PieceSink = (bytes: Uint8Array, chunk: Uint8Array | undefined) => void;

/** A body made in pieces (see PieceSink). */
export interface BodyPieces {
  /** The body's length in bytes when it is known before it is made (sent as Content-Length). */
  readonly byteLength?: number;
  /** Sends the next pieces to `sink`, at least one; false once the last has gone. */
  pull(sink: PieceSink): Promise<boolean>;
  /** Stops the work done ahead: the sender will take no more. */
  stop(): void;
}

/** A body made in chunks of `chunkBytes` each taken from `newChunk`, all zeros (see PieceSink). */
export interface ChunkedBody {
  chunkBytes: number;
  make(newChunk: () => Uint8Array): BodyPieces;
}

/** An answer whose body is made in chunks (see ChunkedBody). */
export interface ChunkedAnswer {
  status: number;
  headers: Record<string, string>;
  body: ChunkedBody;
}

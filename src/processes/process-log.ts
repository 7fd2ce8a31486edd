// Each process's output as a ring buffer of text chunks in SQL, read by character offset.
import type { SqlDatabase } from '../storage/sql-database.ts';

export interface LogLimits {
  /** The ring keeps at least this many of the latest characters (and less than this plus one chunk). */
  maxOutputChars: number;
  /** The most characters one chunk row holds. */
  chunkChars: number;
}

export interface LogSlice {
  data: string;
  offset: number;
  startOffset: number;
  truncated: boolean;
}

interface Piece {
  start: number;
  text: string;
  /** Whether the piece extends the existing last chunk rather than starting a new one. */
  extendsLast: boolean;
}

/**
 * Offsets count UTF-16 units, so what is stored must read back with the same length. SQLite
 * stores TEXT as UTF-8, where a lone surrogate does not survive (it reads back as three
 * replacement characters); each becomes one U+FFFD here, so every offset stays true.
 */
export function wellFormed(text: string): string {
  // The built-ins (ES2024, in Node 20 and Workers) scan a batch of megabytes in a few milliseconds.
  const builtIn = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return builtIn.isWellFormed() ? text : builtIn.toWellFormed();
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether cutting `text` before index `at` would separate a surrogate pair. */
function splitsPair(text: string, at: number): boolean {
  return at > 0 && isHighSurrogate(text.charCodeAt(at - 1)) && isLowSurrogate(text.charCodeAt(at));
}

/** A cut at or before `at` that keeps surrogate pairs whole. */
function cutBefore(text: string, at: number): number {
  return splitsPair(text, at) ? at - 1 : at;
}

export class ProcessLog {
  constructor(
    private readonly db: SqlDatabase,
    private readonly limits: LogLimits,
  ) {}

  /** The latest characters the ring always keeps. */
  get keepsChars(): number {
    return this.limits.maxOutputChars;
  }

  /**
   * Appends `text` to a log whose end is `end`, after `skipped` characters that were produced but
   * are not kept, and returns the new end. Runs inside the caller's transaction, which also
   * records the new end on the process.
   */
  append(processId: string, end: number, text: string, skipped = 0): number {
    const data = wellFormed(text);
    if (data.length === 0) return end + skipped;
    const start = end + skipped;
    const newEnd = start + data.length;
    // After a gap the text starts a chunk of its own: a chunk's characters sit at consecutive offsets.
    const pieces = this.#pieces(processId, start, data, skipped === 0);
    // A piece that starts before the chunk holding `cutoff` would be dropped at once: skip it.
    const cutoff = newEnd - this.limits.maxOutputChars;
    const keepFrom = pieces.reduce((kept, piece) => (piece.start <= cutoff ? Math.max(kept, piece.start) : kept), -1);
    for (const piece of pieces) {
      if (piece.start < keepFrom) continue;
      if (piece.extendsLast) {
        this.db.query(
          'UPDATE process_output SET data = data || ? WHERE process_id = ? AND start_offset = ?',
          piece.text,
          processId,
          piece.start,
        );
      } else {
        this.db.query(
          'INSERT INTO process_output (process_id, start_offset, data) VALUES (?, ?, ?)',
          processId,
          piece.start,
          piece.text,
        );
      }
    }
    if (cutoff > 0) {
      this.db.query(
        `DELETE FROM process_output WHERE process_id = ? AND start_offset <
           (SELECT MAX(start_offset) FROM process_output WHERE process_id = ? AND start_offset <= ?)`,
        processId,
        processId,
        cutoff,
      );
    }
    return newEnd;
  }

  /** The oldest offset still held: the start of the oldest kept chunk (`end` for an empty log). */
  startOffset(processId: string, end: number): number {
    const [row] = this.db.query<{ start: number | null }>(
      'SELECT MIN(start_offset) AS start FROM process_output WHERE process_id = ?',
      processId,
    );
    return row?.start ?? end;
  }

  /**
   * docs/api.md's logs slice: offset = min(max(requested ?? startOffset, startOffset), end), at most
   * `limit` characters from there, one fewer when the last would be half of a surrogate pair.
   */
  read(processId: string, end: number, requested: number | undefined, limit: number): LogSlice {
    const startOffset = this.startOffset(processId, end);
    const offset = Math.min(Math.max(requested ?? startOffset, startOffset), end);
    const truncated = requested !== undefined && requested < startOffset;
    if (limit === 0 || offset >= end) return { data: '', offset, startOffset, truncated };
    const rows = this.db.query<{ start_offset: number; data: string }>(
      `SELECT start_offset, data FROM process_output WHERE process_id = ? AND start_offset >=
         (SELECT MAX(start_offset) FROM process_output WHERE process_id = ? AND start_offset <= ?)
       AND start_offset < ? ORDER BY start_offset`,
      processId,
      processId,
      offset,
      offset + limit,
    );
    const first = rows[0];
    if (first === undefined) return { data: '', offset, startOffset, truncated };
    // Chunks never split a surrogate pair, so the fetched text holds the partner of any cut.
    const text = rows.map((row) => row.data).join('');
    const from = offset - first.start_offset;
    const to = cutBefore(text, Math.min(from + limit, text.length));
    return { data: text.slice(from, Math.max(from, to)), offset, startOffset, truncated };
  }

  /**
   * Splits `data` into what fills the last chunk (when it may and has room) and new chunks of at most
   * `chunkChars`, each cut so that no surrogate pair straddles two chunks.
   */
  #pieces(processId: string, end: number, data: string, mayExtend: boolean): Piece[] {
    const { chunkChars } = this.limits;
    const pieces: Piece[] = [];
    let at = 0;
    const [last] = mayExtend
      ? this.db.query<{ start: number | null }>(
          'SELECT MAX(start_offset) AS start FROM process_output WHERE process_id = ?',
          processId,
        )
      : [];
    const lastStart = last?.start ?? null;
    if (lastStart !== null) {
      const room = chunkChars - (end - lastStart);
      if (room > 0) {
        at = cutBefore(data, Math.min(room, data.length));
        if (at > 0) pieces.push({ start: lastStart, text: data.slice(0, at), extendsLast: true });
      }
    }
    while (at < data.length) {
      const next = cutBefore(data, Math.min(at + chunkChars, data.length));
      pieces.push({ start: end + at, text: data.slice(at, next), extendsLast: false });
      at = next;
    }
    return pieces;
  }
}

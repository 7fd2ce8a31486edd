// Reads a tar held in memory, entry by entry as its bytes arrive, without copying: each file's
// content is a view of the archive's bytes. Strict as modern-tar's `strict` mode, which it
// replaces for uploads (that decoder copied every entry into a buffer of its own, the largest cost
// but one of unpacking an archive of small files): every header's checksum, bodies and metadata
// cut short, anything but zeros after the end, and an archive without its end (two zero blocks)
// are refused. It reads ustar (its prefix field), GNU tar's long names and link targets (`L`,
// `K`), and pax records (`path`, `linkpath`, `size`; per entry and global).

/** The entry kinds of a tar's type flag; `other` for devices, fifos and flags no reader knows. */
export type TarEntryKind = 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'block-device' | 'fifo';

export interface TarEntry {
  /** The name as the archive gives it (pax and GNU long names applied), decoded as UTF-8 (bad bytes as U+FFFD). */
  name: string;
  type: TarEntryKind;
  /** The content's size: 0 for every kind but files. */
  size: number;
  /** A link's target ('' when none). */
  linkname: string;
  /** The content: a view of the archive's bytes, valid as long as they are. */
  data: Uint8Array;
}

/** Why an archive could not be read (the caller tells the client it sent no readable tar). */
export class TarFormatError extends Error {}

const BLOCK = 512;
/** The most a metadata entry (pax records, a GNU long name) may hold, as modern-tar allows. */
const MAX_META_BYTES = 8 * 1024 * 1024;
const MAX_GLOBAL_PAX_KEYS = 512;
const KINDS: Record<number, TarEntryKind> = {
  0x31: 'link',
  0x32: 'symlink',
  0x33: 'character-device',
  0x34: 'block-device',
  0x35: 'directory',
  0x36: 'fifo',
};
const PAX = 0x78; // 'x'
const PAX_GLOBAL = 0x67; // 'g'
const GNU_LONG_NAME = 0x4c; // 'L'
const GNU_LONG_LINK = 0x4b; // 'K'
const utf8 = new TextDecoder();

interface Overrides {
  name?: string;
  linkname?: string;
  size?: number;
}

/**
 * The entries of the tar `bytes`, in archive order. `beforeBody` sees each entry's header (its
 * `data` still empty) before its content is checked to be whole, so a caller can refuse an entry
 * by its declared size even when the archive is cut short after the header.
 */
export function* readTar(bytes: Uint8Array, beforeBody?: (entry: TarEntry) => void): Generator<TarEntry> {
  for (const read of readArrivingTar(bytes, () => bytes.byteLength, beforeBody))
    if (typeof read !== 'number') yield read;
}

/**
 * The entries of a tar whose bytes are still arriving (see ArrivingBytes): `bytes` has the whole
 * archive's length, of which the first `available()` bytes are there. Where it needs bytes not
 * there yet it yields how many must be (a number), and goes on once the caller has waited for
 * them; whether the archive is cut short is judged by the length of `bytes`, so nothing is waited
 * for that will not come. Each entry's `data` is a view of `bytes`.
 */
export function* readArrivingTar(
  bytes: Uint8Array,
  available: () => number,
  beforeBody?: (entry: TarEntry) => void,
): Generator<TarEntry | number> {
  const global: Overrides = {};
  let next: Overrides = {};
  let offset = 0;
  for (;;) {
    if (offset + BLOCK > bytes.byteLength) throw truncated();
    while (offset + BLOCK > available()) yield offset + BLOCK;
    const block = bytes.subarray(offset, offset + BLOCK);
    if (isZero(block)) {
      if (offset + 2 * BLOCK > bytes.byteLength) throw truncated();
      // What follows the end is checked to be zeros, so the end is read once every byte is there.
      while (available() < bytes.byteLength) yield bytes.byteLength;
      if (!isZero(bytes.subarray(offset + BLOCK, offset + 2 * BLOCK))) throw new TarFormatError('Invalid tar header.');
      if (!isZero(bytes.subarray(offset + 2 * BLOCK))) throw new TarFormatError('Invalid EOF.');
      return;
    }
    if (!checksumHolds(block)) throw new TarFormatError('Invalid tar header checksum.');
    const flag = block[156]!;
    const declared = number(block, 124, 12);
    // Unused here, but a header whose numbers are not numbers is not one a tar wrote.
    octal(block, 100, 8);
    number(block, 108, 8);
    number(block, 116, 8);
    number(block, 136, 12);
    offset += BLOCK;
    if (flag === PAX || flag === PAX_GLOBAL || flag === GNU_LONG_NAME || flag === GNU_LONG_LINK) {
      if (declared > MAX_META_BYTES) throw new TarFormatError('Tar metadata entry exceeds maximum size.');
      if (offset + padded(declared) > bytes.byteLength) throw truncated();
      while (offset + padded(declared) > available()) yield offset + padded(declared);
      const body = bytes.subarray(offset, offset + declared);
      offset += padded(declared);
      if (flag === GNU_LONG_NAME) next.name = text(body, 0, body.byteLength);
      else if (flag === GNU_LONG_LINK) next.linkname = text(body, 0, body.byteLength);
      else paxRecords(body, flag === PAX_GLOBAL ? global : next, flag === PAX_GLOBAL);
      continue;
    }
    // A ustar header ("ustar\0") has a prefix field; GNU's ("ustar  ") does not.
    // Fields are read only where they hold something: most entries have no prefix and no link.
    const prefix = isUstar(block) && block[345] !== 0 ? text(block, 345, 155) : '';
    const short = text(block, 0, 100);
    const entry: TarEntry = {
      name: next.name ?? global.name ?? (prefix === '' ? short : `${prefix}/${short}`),
      type: KINDS[flag] ?? 'file',
      size: next.size ?? global.size ?? declared,
      linkname: next.linkname ?? global.linkname ?? (block[157] === 0 ? '' : text(block, 157, 100)),
      data: EMPTY,
    };
    next = {};
    if (entry.type === 'file' && entry.name.endsWith('/')) entry.type = 'directory';
    // Only files have contents (a link's, a directory's or a device's size field is ignored).
    if (entry.type !== 'file') entry.size = 0;
    beforeBody?.(entry);
    if (offset + padded(entry.size) > bytes.byteLength) throw truncated();
    // The content is waited for whole, its padding too (the next header follows it).
    while (offset + padded(entry.size) > available()) yield offset + padded(entry.size);
    entry.data = bytes.subarray(offset, offset + entry.size);
    offset += padded(entry.size);
    yield entry;
  }
}

const EMPTY = new Uint8Array(0);

/** Whether the header's magic is ustar's own ("ustar" then NUL), not GNU's ("ustar" then spaces). */
function isUstar(block: Uint8Array): boolean {
  return (
    block[257] === 0x75 &&
    block[258] === 0x73 &&
    block[259] === 0x74 &&
    block[260] === 0x61 &&
    block[261] === 0x72 &&
    block[262] === 0
  );
}

function truncated(): TarFormatError {
  return new TarFormatError('Tar archive is truncated.');
}

function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

function isZero(bytes: Uint8Array): boolean {
  for (let index = 0; index < bytes.byteLength; index += 1) if (bytes[index] !== 0) return false;
  return true;
}

/** The header's checksum field against the sum of its bytes, the field itself counted as spaces. */
function checksumHolds(block: Uint8Array): boolean {
  let sum = 8 * 0x20;
  for (let index = 0; index < 148; index += 1) sum += block[index]!;
  for (let index = 156; index < BLOCK; index += 1) sum += block[index]!;
  return octal(block, 148, 8) === sum;
}

/** A field up to its first NUL, as UTF-8 (the decoder is also the fastest way to read a short ASCII name). */
function text(bytes: Uint8Array, offset: number, size: number): string {
  let end = offset;
  const limit = Math.min(offset + size, bytes.byteLength);
  while (end < limit && bytes[end] !== 0) end += 1;
  return utf8.decode(bytes.subarray(offset, end));
}

/** An octal field (spaces skipped, ended by NUL); anything else in it makes the archive unreadable. */
function octal(block: Uint8Array, offset: number, size: number): number {
  let value = 0;
  for (let index = offset; index < offset + size; index += 1) {
    const byte = block[index]!;
    if (byte === 0) break;
    if (byte === 0x20) continue;
    if (byte < 0x30 || byte > 0x37) throw new TarFormatError('Invalid tar number.');
    value = value * 8 + (byte - 0x30);
  }
  return value;
}

/** A numeric field: octal, or GNU's base-256 when its first byte's high bit is set. */
function number(block: Uint8Array, offset: number, size: number): number {
  if ((block[offset]! & 0x80) === 0) return octal(block, offset, size);
  let value = block[offset]! & 0x7f;
  for (let index = offset + 1; index < offset + size; index += 1) value = value * 256 + block[index]!;
  if (!Number.isSafeInteger(value)) throw new TarFormatError('TAR number too large');
  return value;
}

/** `<length> <key>=<value>\n` records: the ones that name an entry or size its content land in `into`. */
function paxRecords(body: Uint8Array, into: Overrides, global: boolean): void {
  let keys = 0;
  let offset = 0;
  while (offset < body.byteLength) {
    const space = body.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number.parseInt(utf8.decode(body.subarray(offset, space)), 10);
    if (!(length > 0)) break;
    const record = utf8.decode(body.subarray(space + 1, offset + length - 1));
    offset += length;
    const equals = record.indexOf('=');
    if (equals <= 0) continue;
    keys += 1;
    if (global && keys > MAX_GLOBAL_PAX_KEYS) throw new TarFormatError('Too many global attributes.');
    const key = record.slice(0, equals);
    const value = record.slice(equals + 1);
    if (key === 'path') into.name = value;
    else if (key === 'linkpath') into.linkname = value;
    else if (key === 'size' && /^\d+$/.test(value) && Number.isSafeInteger(Number(value))) into.size = Number(value);
  }
}

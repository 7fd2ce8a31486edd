// The header blocks of one tar entry, as POSIX pax writes them: a ustar header, preceded by a pax
// extended header when a name, a link target or a size does not fit ustar's fields. Only what a
// workspace archive holds: regular files, directories and symlinks, owned by 0:0.
//
// Archives are read by tar-reader.ts. They are written here because modern-tar's packer
// makes a WritableStream for every entry, which in Node 20 cost more than everything else done to
// write an archive of small files (5,000 entries: about 55 ms of 125).

export type TarEntryType = 'file' | 'directory' | 'symlink';

export interface TarHeaderFields {
  /** The entry's name, a directory's ending in `/`. */
  name: string;
  type: TarEntryType;
  /** A file's size in bytes (0 for the others). */
  size: number;
  mode: number;
  /** A symlink's target. */
  linkname?: string;
  mtime: Date;
}

export const TAR_BLOCK = 512;
/** The end of an archive: two zero blocks. */
export const TAR_END = new Uint8Array(2 * TAR_BLOCK);

const TYPE_FLAGS: Record<TarEntryType, string> = { file: '0', directory: '5', symlink: '2' };
const NAME_BYTES = 100;
/** The largest size ustar's 11 octal digits hold; larger sizes go in a pax record. */
const MAX_USTAR_SIZE = 0o77777777777;
const encoder = new TextEncoder();
const MAGIC = encoder.encode('ustar\u000000');
/** Where a header's fields after the name start, and where those after the link target end (the magic and version). */
const FIELDS_START = 100;
const LINKNAME_START = 157;
const FIELDS_END = 265;
const PAX_NAME = encoder.encode('PaxHeader');
const EMPTY = new Uint8Array(0);

/** A name's UTF-8 bytes; most names are ASCII, which needs no encoder. */
function utf8(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) return encoder.encode(text);
    bytes[index] = code;
  }
  return bytes;
}

/**
 * Writes the header blocks of `fields` into `target` at `offset` (whose bytes must be zero), and
 * answers the offset after them; undefined when they do not fit in what is left of `target`. A
 * name and link target of ASCII within ustar's fields (nearly all) are written in place, with no
 * allocation; others go through `tarHeaderBlocks`.
 */
export function writeTarHeader(target: Uint8Array, offset: number, fields: TarHeaderFields): number | undefined {
  const linkname = fields.linkname ?? '';
  if (fields.size > MAX_USTAR_SIZE || !isShortAscii(fields.name) || !isShortAscii(linkname)) {
    const blocks = tarHeaderBlocks(fields);
    if (offset + blocks.byteLength > target.byteLength) return undefined;
    target.set(blocks, offset);
    return offset + blocks.byteLength;
  }
  if (offset + TAR_BLOCK > target.byteLength) return undefined;
  const block = target.subarray(offset, offset + TAR_BLOCK);
  const namesSum = writeAscii(block, 0, fields.name) + writeAscii(block, LINKNAME_START, linkname);
  fillUstar(block, fields.type, fields.size, fields.mode, fields.mtime, namesSum);
  return offset + TAR_BLOCK;
}

/** The length of the header blocks `writeTarHeader` writes for `fields`. */
export function tarHeaderLength(fields: TarHeaderFields): number {
  if (fields.size <= MAX_USTAR_SIZE && isShortAscii(fields.name) && isShortAscii(fields.linkname ?? ''))
    return TAR_BLOCK;
  return tarHeaderBlocks(fields).byteLength;
}

/** Whether `text` fits a ustar name field as it is: ASCII, at most 100 characters. */
function isShortAscii(text: string): boolean {
  if (text.length > NAME_BYTES) return false;
  for (let index = 0; index < text.length; index += 1) if (text.charCodeAt(index) >= 0x80) return false;
  return true;
}

/** Writes ASCII `text` and answers the sum of its bytes (for the checksum). */
function writeAscii(block: Uint8Array, offset: number, text: string): number {
  let sum = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    block[offset + index] = code;
    sum += code;
  }
  return sum;
}

/** The blocks that precede an entry's content: one ustar header, or a pax header, its records, and the ustar header. */
export function tarHeaderBlocks(fields: TarHeaderFields): Uint8Array {
  const name = utf8(fields.name);
  const linkname = utf8(fields.linkname ?? '');
  const records: string[] = [];
  if (!fitsUstar(name, fields.name)) records.push(paxRecord('path', fields.name));
  if (!fitsUstar(linkname, fields.linkname ?? '')) records.push(paxRecord('linkpath', fields.linkname ?? ''));
  if (fields.size > MAX_USTAR_SIZE) records.push(paxRecord('size', String(fields.size)));
  const ustar = ustarHeader({
    ...fields,
    name: name.subarray(0, NAME_BYTES),
    linkname: linkname.subarray(0, NAME_BYTES),
  });
  if (records.length === 0) return ustar;
  const body = encoder.encode(records.join(''));
  const pax = ustarHeader({
    name: PAX_NAME,
    linkname: EMPTY,
    type: 'pax',
    size: body.byteLength,
    mode: 0o644,
    mtime: fields.mtime,
  });
  const blocks = new Uint8Array(TAR_BLOCK + paddedSize(body.byteLength) + TAR_BLOCK);
  blocks.set(pax, 0);
  blocks.set(body, TAR_BLOCK);
  blocks.set(ustar, blocks.byteLength - TAR_BLOCK);
  return blocks;
}

/** A content's size rounded up to whole blocks. */
export function paddedSize(size: number): number {
  return Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
}

/** ustar fields hold at most 100 bytes, and are read as ASCII by tars that know no pax (a name as bytes is as long as as text only when it is ASCII). */
function fitsUstar(bytes: Uint8Array, text: string): boolean {
  return bytes.byteLength <= NAME_BYTES && bytes.byteLength === text.length;
}

/** `<length> <key>=<value>\n`, where the length counts the whole record, its own digits included. */
function paxRecord(key: string, value: string): string {
  const rest = encoder.encode(` ${key}=${value}\n`).byteLength;
  let length = rest + String(rest).length;
  if (String(length).length !== String(rest).length) length = rest + String(length).length;
  return `${length} ${key}=${value}\n`;
}

function ustarHeader(fields: {
  name: Uint8Array;
  linkname: Uint8Array;
  type: TarEntryType | 'pax';
  size: number;
  mode: number;
  mtime: Date;
}): Uint8Array {
  const block = new Uint8Array(TAR_BLOCK);
  block.set(fields.name, 0);
  block.set(fields.linkname, 157);
  let namesSum = 0;
  for (const byte of fields.name) namesSum += byte;
  for (const byte of fields.linkname) namesSum += byte;
  fillUstar(block, fields.type, fields.size, fields.mode, fields.mtime, namesSum);
  return block;
}

/**
 * The fields of a ustar header but its name and link target (written already, their bytes
 * summing to `namesSum`), and its checksum.
 */
function fillUstar(
  block: Uint8Array,
  type: TarEntryType | 'pax',
  size: number,
  mode: number,
  mtime: Date,
  namesSum: number,
): void {
  octal(block, 100, 8, mode);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, Math.min(size, MAX_USTAR_SIZE));
  octal(block, 136, 12, Math.max(0, Math.floor(mtime.getTime() / 1000)));
  block[156] = (type === 'pax' ? 'x' : TYPE_FLAGS[type]).charCodeAt(0);
  block.set(MAGIC, 257);
  // The checksum counts its own field as eight spaces. The block was zeros, and nothing is
  // written past the magic and version (no owner names, devices or prefix): the sum is the names'
  // and that of the fields between them and after the link target, not of all 512 bytes.
  block.fill(0x20, 148, 156);
  let sum = namesSum;
  for (let index = FIELDS_START; index < LINKNAME_START; index += 1) sum += block[index]!;
  for (let index = LINKNAME_START + NAME_BYTES; index < FIELDS_END; index += 1) sum += block[index]!;
  octal(block, 148, 7, sum);
}

/** `value` in octal, zero-padded to `width - 1` digits and ended by NUL. */
function octal(block: Uint8Array, offset: number, width: number, value: number): void {
  const digits = value.toString(8);
  const start = offset + width - 1 - digits.length;
  block.fill(0x30, offset, start);
  for (let index = 0; index < digits.length; index += 1) block[start + index] = digits.charCodeAt(index);
  block[offset + width - 1] = 0;
}

// Tar archives written byte by byte, for the entries no tar tool writes (`..`, absolute names, NUL in a
// name, links out): each entry a ustar header (with its checksum) and its content padded to 512 bytes.
import { gzipSync } from 'node:zlib';

export interface RawEntry {
  /** The name field's bytes: a string is written as UTF-8, bytes as they are (a name that is not UTF-8). */
  name: string | Uint8Array;
  /** The typeflag: '0' file (default), '1' hard link, '2' symlink, '5' directory, '6' fifo. */
  type?: string;
  linkname?: string;
  content?: string | Uint8Array;
  /** PAX records for the entry (`path=` may hold what a ustar name field cannot: NUL, over 100 bytes). */
  pax?: Record<string, string>;
  /** The size the header claims, when it must differ from the content's. */
  size?: number;
}

const encoder = new TextEncoder();

function block(entry: RawEntry): Uint8Array {
  const header = new Uint8Array(512);
  const field = (offset: number, length: number, value: string | Uint8Array) =>
    header.set((typeof value === 'string' ? encoder.encode(value) : value).subarray(0, length), offset);
  const content =
    typeof entry.content === 'string' ? encoder.encode(entry.content) : (entry.content ?? new Uint8Array());
  const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
  field(0, 100, entry.name);
  field(100, 8, octal(entry.type === '5' ? 0o755 : 0o644, 8));
  field(108, 8, octal(0, 8));
  field(116, 8, octal(0, 8));
  field(124, 12, octal(entry.size ?? content.byteLength, 12));
  field(136, 12, octal(1_700_000_000, 12));
  field(156, 1, entry.type ?? '0');
  field(157, 100, entry.linkname ?? '');
  field(257, 8, 'ustar\u000000');
  header.fill(0x20, 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return header;
}

function padded(content: Uint8Array): Uint8Array[] {
  const rest = -content.byteLength & 511;
  return rest === 0 ? [content] : [content, new Uint8Array(rest)];
}

/** One PAX record: its length (counting itself), key=value, a newline. */
function paxRecord(key: string, value: string): Uint8Array {
  const body = encoder.encode(` ${key}=${value}\n`);
  let length = body.byteLength + 1;
  while (String(length).length + body.byteLength !== length) length = String(length).length + body.byteLength;
  return new Uint8Array([...encoder.encode(String(length)), ...body]);
}

/** The bytes of a tar holding the entries, with the two zero blocks that end it. */
export function tarBytes(entries: readonly RawEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    if (entry.pax) {
      const records = Object.entries(entry.pax).map(([key, value]) => paxRecord(key, value));
      const body = new Uint8Array(records.reduce((total, record) => total + record.byteLength, 0));
      records.reduce((offset, record) => (body.set(record, offset), offset + record.byteLength), 0);
      parts.push(block({ name: 'PaxHeader', type: 'x', size: body.byteLength }), ...padded(body));
    }
    const content =
      typeof entry.content === 'string' ? encoder.encode(entry.content) : (entry.content ?? new Uint8Array());
    parts.push(block(entry), ...padded(content));
  }
  parts.push(new Uint8Array(1024));
  const bytes = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  parts.reduce((offset, part) => (bytes.set(part, offset), offset + part.byteLength), 0);
  return bytes;
}

export function tgzBytes(entries: readonly RawEntry[]): Uint8Array {
  return gzipSync(tarBytes(entries));
}

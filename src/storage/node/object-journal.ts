// The fs object store's write-ahead journal: a large set of small objects written as one file and
// made durable with one sync, whose objects are moved into their own files afterwards.
//
// A journal file is `.journal-<tag>` in the store's root (names starting with `.` are never keys):
// a 16-byte prelude (the magic `TGJRNL01`, the entry count and the head's length, both u32 little
// endian), per entry the key's UTF-8 length and its file image's length (u32 each) and the key's
// bytes, then every entry's file image (the object file's exact bytes: header and body) in order.
// It is written to `<name>.tmp`, synced, renamed to its name and the directory synced, so a
// journal under its name is whole; a `.tmp` left by a crash was never answered and is removed.

import { open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const MAGIC = 'TGJRNL01';
const PRELUDE_BYTES = 16;
const JOURNAL_PREFIX = '.journal-';
const TEMP_SUFFIX = '.tmp';

export interface JournalEntry {
  key: string;
  /** The object file's bytes, header included. */
  image: Uint8Array;
}

/** The journal's image: its head written, and room after it for each entry's image in order (see `imageAt`). */
export interface JournalImage {
  bytes: Buffer;
  /** Where the first entry's image starts. */
  imagesAt: number;
}

/**
 * Lays out a journal for entries of these keys and image lengths, in shared memory: the writing
 * threads read the images from it without a copy while the event loop serves them.
 */
export function journalImage(keys: readonly string[], imageLengths: readonly number[]): JournalImage {
  let headBytes = PRELUDE_BYTES;
  let imageBytes = 0;
  const keyLengths = keys.map((key, index) => {
    const length = Buffer.byteLength(key);
    headBytes += 8 + length;
    imageBytes += imageLengths[index]!;
    return length;
  });
  const bytes = Buffer.from(new SharedArrayBuffer(headBytes + imageBytes));
  bytes.write(MAGIC, 0, 'latin1');
  bytes.writeUInt32LE(keys.length, 8);
  bytes.writeUInt32LE(headBytes, 12);
  let at = PRELUDE_BYTES;
  for (const [index, key] of keys.entries()) {
    bytes.writeUInt32LE(keyLengths[index]!, at);
    bytes.writeUInt32LE(imageLengths[index]!, at + 4);
    at += 8;
    at += bytes.write(key, at, 'utf8');
  }
  return { bytes, imagesAt: headBytes };
}

/** The entries of a journal file read whole; throws, naming the file, on any bytes it did not write. */
export function readJournal(bytes: Buffer, file: string): JournalEntry[] {
  const corrupt = (why: string) =>
    new Error(`Blob journal ${file} is damaged (${why}); move it out of the blob directory to start without it.`);
  if (bytes.byteLength < PRELUDE_BYTES || bytes.toString('latin1', 0, 8) !== MAGIC) throw corrupt('no header');
  const count = bytes.readUInt32LE(8);
  const headBytes = bytes.readUInt32LE(12);
  if (headBytes > bytes.byteLength) throw corrupt('head beyond its end');
  const entries: JournalEntry[] = [];
  let at = PRELUDE_BYTES;
  let imageAt = headBytes;
  for (let index = 0; index < count; index += 1) {
    if (at + 8 > headBytes) throw corrupt('head too short');
    const keyLength = bytes.readUInt32LE(at);
    const imageLength = bytes.readUInt32LE(at + 4);
    at += 8;
    if (at + keyLength > headBytes || imageAt + imageLength > bytes.byteLength) throw corrupt('entry beyond its end');
    const key = bytes.toString('utf8', at, at + keyLength);
    at += keyLength;
    entries.push({ key, image: bytes.subarray(imageAt, imageAt + imageLength) });
    imageAt += imageLength;
  }
  if (at !== headBytes || imageAt !== bytes.byteLength) throw corrupt('length does not match its entries');
  return entries;
}

/** A journal's file name, unique within the process by `tag`. */
export function journalName(tag: string): string {
  return `${JOURNAL_PREFIX}${tag}`;
}

/** The name a journal is written under before it is whole. */
export function journalTempName(name: string): string {
  return name + TEMP_SUFFIX;
}

/**
 * Writes the journal durably: once this resolves it is whole under its name, and survives a power
 * cut. (The fs store has its writing threads do the same, see DurableFiles.writeNamed.)
 */
export async function writeJournal(dir: string, name: string, bytes: Uint8Array, mode: number): Promise<void> {
  const temp = join(dir, journalTempName(name));
  const handle = await open(temp, 'wx', mode);
  try {
    for (let offset = 0; offset < bytes.byteLength;) {
      const { bytesWritten } = await handle.write(bytes, offset, bytes.byteLength - offset, offset);
      offset += bytesWritten;
    }
    await handle.datasync();
    await handle.close();
    await rename(temp, join(dir, name));
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/**
 * Removes journals whose objects are durable in their own files; once this resolves their removal
 * is durable too, so no later write of those keys can be undone by replaying one.
 */
export async function removeJournals(dir: string, names: readonly string[]): Promise<void> {
  // One removed by an attempt that failed later is gone already.
  for (const name of names)
    await unlink(join(dir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  await syncDirectory(dir);
}

/**
 * The journals left in `dir` by a process that ended before moving their objects, in the order
 * written; removes the temp files of journals never finished (their writes were never answered).
 */
export async function leftJournals(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [] as string[];
    throw error;
  });
  const journals: string[] = [];
  for (const name of names) {
    if (!name.startsWith(JOURNAL_PREFIX)) continue;
    if (name.endsWith(TEMP_SUFFIX)) await unlink(join(dir, name)).catch(() => undefined);
    else journals.push(name);
  }
  // Journals left together hold distinct keys (a key's writes wait for its journal's removal), so their order does not matter.
  return journals.sort();
}

/** A journal file's bytes. */
export function readJournalFile(dir: string, name: string): Promise<Buffer> {
  return readFile(join(dir, name));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

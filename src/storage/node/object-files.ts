// An object file of the fs store: its header (the body's sha256, see fs-object-store.ts) and its
// writing, atomic and durable, by the shared writing threads or else by this thread.

import { hash, randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.ts';
import { DurableFiles } from './durable-files.ts';

/** The threads that write objects, shared by every store of the process (created at the first write). */
let durableFiles: DurableFiles | undefined;

export const HEADER_PREFIX = 'sha256:';
export const HEADER_SIZE = HEADER_PREFIX.length + 64 + 1;
/**
 * Temp files are named by this process's random tag and a count, unique within the process (the
 * only one writing its data dir) without a random draw per file; opened with `wx`, a name in use
 * fails the write rather than sharing a file.
 */
const TEMP_TAG = randomBytes(6).toString('hex');
let tempCount = 0;

/** A name unique within the process, for a temp file or a journal. */
export function nextTempTag(): string {
  return `${TEMP_TAG}-${(tempCount += 1)}`;
}

/** The process's writing threads, started at the first call. */
export function sharedDurableFiles(): DurableFiles {
  durableFiles ??= new DurableFiles({ dir: PRIVATE_DIR_MODE, file: PRIVATE_FILE_MODE });
  return durableFiles;
}

/**
 * Writes to a temp file beside the target, flushes it to disk, then renames it over the target:
 * readers see the old object or the new one, never a part, even if the process is killed
 * mid-write; the flush keeps a power cut from leaving a renamed but empty file. Objects are
 * tenants' content, so directories and files are created for their owner only.
 */
export async function writeFileAtomically(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  const file = `${dir}/${name}`;
  const temp = `${dir}/.tmp-${nextTempTag()}`;
  // Written by the shared threads, many files a batch; here only when they cannot take work.
  const durableFiles = sharedDurableFiles();
  if (durableFiles.usable) return durableFiles.write({ dir, temp, file, bytes });
  // A concurrent delete may prune a directory between mkdir and open, so retry a few times.
  for (let attempt = 0; ; attempt += 1) {
    const handle = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
      .then(() => open(temp, 'wx', PRIVATE_FILE_MODE))
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT' && attempt < 5) return null;
        throw error;
      });
    if (handle === null) continue;
    try {
      await handle.writeFile(bytes);
      await handle.datasync();
    } catch (error) {
      await handle.close();
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(temp, file).catch(async (error: unknown) => {
      await unlink(temp).catch(() => undefined);
      throw error;
    });
    return;
  }
}

/**
 * Writes each image atomically and durably as writeFileAtomically does, the set together (see
 * FsObjectStore.putMany); `images`, when given, is the buffer they all lie in, given up to the
 * writing thread.
 */
export async function writeFilesAtomically(
  files: readonly { dir: string; name: string; image: Uint8Array }[],
  images?: ArrayBuffer,
): Promise<void> {
  const durableFiles = sharedDurableFiles();
  if (!durableFiles.usable) {
    await Promise.all(files.map(({ dir, name, image }) => writeFileAtomically(dir, name, image)));
    return;
  }
  await durableFiles.writeMany(
    files.map(({ dir, name, image }) => ({
      dir,
      temp: `${dir}/.tmp-${nextTempTag()}`,
      file: `${dir}/${name}`,
      bytes: image,
    })),
    images,
  );
}

/**
 * Lays an object's file image into `image` (HEADER_SIZE + the body's bytes, often a view of a
 * buffer holding many): the body after the header, then the header naming its sha256 (`sha256`
 * when the caller knows it, else hashed from the image's copy). Answers the etag.
 */
export function layImage(image: Buffer, body: Uint8Array, sha256: string | undefined): string {
  image.set(body, HEADER_SIZE);
  const etag = sha256 ?? hash('sha256', image.subarray(HEADER_SIZE), 'hex');
  image.write(`${HEADER_PREFIX}${etag}\n`, 0, 'latin1');
  return etag;
}

/** The etag a file's header holds; throws, naming the file, when it has none. */
export function parseHeader(bytes: Uint8Array, file: string): string {
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, HEADER_SIZE)).toString(
    'latin1',
  );
  if (header.length < HEADER_SIZE || !header.startsWith(HEADER_PREFIX) || !header.endsWith('\n')) {
    throw new Error(`Object file ${file} has no valid header; it was not written by this store.`);
  }
  return header.slice(HEADER_PREFIX.length, -1);
}

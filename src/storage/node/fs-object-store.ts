// The filesystem ObjectStore driver: the embedded Node home keeps blobs as files under its data dir.
//
// Layout: key `a/b/c` is stored at `<root>/a.d/b.d/c.obj`. Directories end in `.d` and objects
// in `.obj`, so key `a` and key `a/b` can both exist (as S3 allows). Each segment is
// percent-encoded only where it must be: `%`, control characters and a leading `.`, so names
// stay readable and no stored name starts with `.`; that leaves `.`-names for temp files.
// Keys are compared case-sensitively, so a case-insensitive disk is not supported.
//
// Each object file is a 72-byte header, `sha256:<hex>\n` of the body, followed by the body.
// The etag is that hash: computed once at put, written in the same file as the bytes (so one
// rename replaces both together, which a sidecar file could not), and read back by `head`
// from the header alone. Size and mtime would be cheaper but can repeat for different bytes
// written within one timestamp tick.
//
// A large set of small objects (an archive unpacked) is first written as one journal file
// (object-journal.ts), answered once that is synced, and served from memory until a background
// step has moved its objects into their own files, synced those and removed the journal. Every
// write or delete of a journalled key waits for that removal, so replaying a journal left by a
// crash (done before the store serves) never undoes a later write.

import { hash, randomBytes } from 'node:crypto';
import { readFile as readFileWithCallback } from 'node:fs';
import { access, mkdir, open, rename, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Log } from '../../core/log.ts';
import {
  assertDeleteBatch,
  DEFAULT_LIST_LIMIT,
  PreconditionFailedError,
  type ListOptions,
  type ObjectInfo,
  type ObjectList,
  type ObjectStore,
  type PutManyItem,
  type PutManyOptions,
  type PutOptions,
  type StoredObject,
} from '../object-store.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.ts';
import {
  byCodeUnits,
  DIRECTORY_SUFFIX,
  mergeKeys,
  nameFor,
  OBJECT_SUFFIX,
  validateKey,
  walkKeys,
} from './object-layout.ts';
import { DurableFiles } from './durable-files.ts';
import {
  journalImage,
  journalName,
  journalTempName,
  leftJournals,
  readJournal,
  readJournalFile,
  removeJournals,
  writeJournal,
} from './object-journal.ts';

/**
 * Whole-file reads by fs.readFile's callback form, whose open, stat, read and close are chained in
 * C++: the promise form costs a FileHandle and a promise per step, and took about twice the CPU
 * to read an archive's 5,000 small objects.
 */
const readFile = promisify(readFileWithCallback);

/** The threads that write objects, shared by every store of the process (created at the first write). */
let durableFiles: DurableFiles | undefined;

const HEADER_PREFIX = 'sha256:';
const HEADER_SIZE = HEADER_PREFIX.length + 64 + 1;
const MAX_REMEMBERED_DIRECTORIES = 10_000;
/**
 * Temp files are named by this process's random tag and a count, unique within the process (the
 * only one writing its data dir) without a random draw per file; opened with `wx`, a name in use
 * fails the write rather than sharing a file.
 */
const TEMP_TAG = randomBytes(6).toString('hex');
let tempCount = 0;
/**
 * The smallest set journalled: a smaller one syncs each file by fdatasync (durable-files.ts), a
 * larger one would otherwise need a syncfs of the filesystem, which costs more than the journal's
 * one fdatasync the more files it makes durable.
 */
const JOURNAL_FROM = 128;
/**
 * The largest set journalled, in bytes of its object files: small objects are what a journal
 * saves (a file each costs far more than its bytes); a set this large is mostly a few big files.
 * The archive reader's sets are at most 8 MiB (archive-unpack.ts).
 */
const JOURNAL_MAX_BYTES = 16 * 1024 * 1024;
/** Bytes of journals held in memory (served from there until moved) at most; past it sets go to their files directly. */
const JOURNALLED_MAX_BYTES = 64 * 1024 * 1024;
/**
 * A journal is moved once no other has been written for this long (or once journals hold half
 * their bound): a move creates thousands of files, kernel work that on a few cores would slow
 * the request still writing sets (an archive's sets come tens of milliseconds apart, its commit
 * after the last).
 */
const JOURNAL_QUIET_MS = 100;

/** A journalled object, served from its journal's image until the journal is removed. */
interface JournalledObject {
  key: string;
  dir: string;
  name: string;
  etag: string;
  image: Uint8Array;
  /** The key lock's chain while the journal holds it: nothing else waits on the key while it is the chain's end. */
  lock: Promise<unknown> | undefined;
}

export interface FsObjectStoreOptions {
  /** How long a journal waits before its objects are moved to their own files (tests crash a process meanwhile). */
  journalMoveDelayMs?: number;
  /** Where failures of the background move are reported. */
  log?: Log;
}

export class FsObjectStore implements ObjectStore {
  readonly #rootDir: string;
  readonly #journalMoveDelayMs: number;
  readonly #log: Log | undefined;
  /** Objects of journals not yet removed, by key. */
  readonly #journalled = new Map<string, JournalledObject>();
  /**
   * Objects of journals being written, by key, with their journal's durability cell: served once
   * the cell says the journal is durable, which a caller may have seen (and acted on, as a manifest
   * commit naming them) before this thread has heard the writing thread's answer.
   */
  readonly #writing = new Map<string, { object: JournalledObject; cell: Int32Array }>();
  #journalledBytes = 0;
  /**
   * Journals waiting to be moved. They are moved together, by one batch of the writing threads
   * (one sync for all): work no caller waits for takes one thread, never all of them from the
   * writes callers wait for.
   */
  readonly #toMove: { name: string; objects: readonly JournalledObject[]; moved: () => void }[] = [];
  #moverRunning = false;
  /** When the last journal was written (performance.now()). */
  #journalWrittenAt = 0;
  /** Journals left by a crash, replayed before the store serves anything (see `recover`). */
  #recovered: Promise<void> | undefined;
  /**
   * One promise chain per key: writes and deletes of a key run one at a time, which makes the
   * check-then-rename of `ifMatch` / `ifNoneMatch` atomic within this process. Two processes
   * sharing one data dir are not serialised against each other.
   */
  readonly #keyLocks = new Map<string, Promise<unknown>>();
  /**
   * The directory of each key prefix met (`ws/x/blobs/ab` to its path on disk): a batch of
   * thousands of blobs lies in a few hundred directories, and encoding and joining every segment
   * of every key again cost more than writing the batch's bytes.
   */
  readonly #directories = new Map<string, string>();

  constructor(rootDir: string, options: FsObjectStoreOptions = {}) {
    this.#rootDir = rootDir;
    this.#journalMoveDelayMs = options.journalMoveDelayMs ?? 0;
    this.#log = options.log;
  }

  /** A store whose journals left by a crash are replayed: it fails here, rather than at its first call, if one cannot be. */
  static async open(rootDir: string, options: FsObjectStoreOptions = {}): Promise<FsObjectStore> {
    const store = new FsObjectStore(rootDir, options);
    await store.recover();
    return store;
  }

  /** Moves the objects of journals left by a crash into their files; every call waits for it. */
  recover(): Promise<void> {
    this.#recovered ??= this.#replayJournals();
    return this.#recovered;
  }

  /** Resolves once no journal is pending (tests and benchmarks wait for the store to be quiet). */
  async settled(): Promise<void> {
    await this.recover();
    while (this.#journalled.size > 0 || this.#writing.size > 0) {
      const objects = [...this.#journalled.values(), ...[...this.#writing.values()].map(({ object }) => object)];
      await Promise.all([...new Set(objects.map((object) => object.lock))]);
    }
  }

  async get(key: string): Promise<StoredObject | undefined> {
    await this.recover();
    const journalled = this.#journalledObject(key);
    if (journalled !== undefined) {
      // A copy: the journal's image is shared with the writing threads.
      const body = new Uint8Array(journalled.image.subarray(HEADER_SIZE));
      return { key, size: body.byteLength, etag: journalled.etag, body };
    }
    const file = this.#objectPath(key);
    const bytes = await readFile(file).catch(nullWhenMissing);
    if (bytes === null) return undefined;
    const etag = parseHeader(bytes, file);
    const body = new Uint8Array(bytes.buffer, bytes.byteOffset + HEADER_SIZE, bytes.byteLength - HEADER_SIZE);
    return { key, size: body.byteLength, etag, body };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    await this.recover();
    const journalled = this.#journalledObject(key);
    if (journalled !== undefined)
      return { key, size: journalled.image.byteLength - HEADER_SIZE, etag: journalled.etag };
    const file = this.#objectPath(key);
    const handle = await open(file, 'r').catch(nullWhenMissing);
    if (handle === null) return undefined;
    try {
      const header = Buffer.alloc(HEADER_SIZE);
      const { bytesRead } = await handle.read(header, 0, HEADER_SIZE, 0);
      const etag = parseHeader(header.subarray(0, bytesRead), file);
      const { size } = await handle.stat();
      return { key, size: size - HEADER_SIZE, etag };
    } finally {
      await handle.close();
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<ObjectInfo> {
    await this.recover();
    const { dir, name } = this.#objectLocation(key);
    // The file image doubles as a private copy: the caller may reuse its buffer while this
    // write waits for the key lock.
    const image = Buffer.allocUnsafe(HEADER_SIZE + body.byteLength);
    image.set(body, HEADER_SIZE);
    const etag = options.sha256 ?? hash('sha256', image.subarray(HEADER_SIZE), 'hex');
    image.write(`${HEADER_PREFIX}${etag}\n`, 0, 'latin1');
    // The same bytes again for a journalled key nothing else waits on: the journal already holds them durably.
    const journalled = this.#journalled.get(key);
    if (
      journalled?.etag === etag &&
      this.#keyLocks.get(key) === journalled.lock &&
      options.ifNoneMatch === undefined &&
      (options.ifMatch === undefined || options.ifMatch === etag)
    )
      return { key, size: body.byteLength, etag };
    return this.#withKeyLock(key, async () => {
      if (options.ifMatch !== undefined || options.ifNoneMatch !== undefined) {
        const current = await this.head(key);
        if (options.ifNoneMatch === '*' && current !== undefined) throw new PreconditionFailedError(key);
        if (options.ifMatch !== undefined && current?.etag !== options.ifMatch) {
          throw new PreconditionFailedError(key);
        }
      }
      await writeFileAtomically(dir, name, image);
      return { key, size: body.byteLength, etag };
    });
  }

  /**
   * Writes the set as one batch of the writing threads, made durable by one sync (see
   * durable-files.ts), under one turn of every key's lock rather than a chain of promises per key.
   */
  async putMany(items: readonly PutManyItem[], options: PutManyOptions = {}): Promise<void> {
    await this.recover();
    const keys = items.map((item) => item.key);
    if (new Set(keys).size !== keys.length) {
      // Writes of one key take turns in the order asked, which one batch could not keep.
      await Promise.all(
        items.map(({ key, body, sha256 }) => this.put(key, body, sha256 === undefined ? {} : { sha256 })),
      );
      return;
    }
    // One image buffer for the set: thousands of small buffers cost more to make and to collect.
    let total = 0;
    for (const { body } of items) total += HEADER_SIZE + body.byteLength;
    if (
      items.length >= JOURNAL_FROM &&
      total <= JOURNAL_MAX_BYTES &&
      this.#journalledBytes + total <= JOURNALLED_MAX_BYTES
    )
      return this.#journal(items, keys, options.onDurabilityCell);
    const images = Buffer.allocUnsafeSlow(total);
    let at = 0;
    const files = items.map(({ key, body, sha256 }) => {
      const { dir, name } = this.#objectLocation(key);
      const image = images.subarray(at, (at += HEADER_SIZE + body.byteLength));
      image.set(body, HEADER_SIZE);
      const etag = sha256 ?? hash('sha256', image.subarray(HEADER_SIZE), 'hex');
      image.write(`${HEADER_PREFIX}${etag}\n`, 0, 'latin1');
      return { dir, name, image };
    });
    await this.#withKeyLocks(keys, () => writeFilesAtomically(files, images.buffer));
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    assertDeleteBatch(keys);
    await Promise.all(keys.map((key) => this.delete(key)));
  }

  async delete(key: string): Promise<void> {
    await this.recover();
    const file = this.#objectPath(key);
    await this.#withKeyLock(key, async () => {
      await unlink(file).catch(nullWhenMissing);
      // Empty directories are pruned so listing does not walk dead branches; rmdir refuses
      // non-empty ones, and a put racing with this recreates its directory (see writeFileAtomically).
      const segments = key.split('/');
      for (let depth = segments.length - 1; depth > 0; depth -= 1) {
        const removed = await rmdir(this.#directoryPath(segments.slice(0, depth))).then(
          () => true,
          () => false,
        );
        if (!removed) break;
      }
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ObjectList> {
    await this.recover();
    const limit = Math.max(1, options.limit ?? DEFAULT_LIST_LIMIT);
    // The cursor is the last key of the previous page; the walk resumes strictly after it.
    const after = options.cursor;
    const found: ObjectInfo[] = [];
    const journalled: string[] = [];
    const listed = (key: string) => key.startsWith(prefix) && (after === undefined || key > after);
    for (const key of this.#journalled.keys()) if (listed(key)) journalled.push(key);
    for (const [key, { cell }] of this.#writing)
      if (listed(key) && !this.#journalled.has(key) && Atomics.load(cell, 0) === 1) journalled.push(key);
    journalled.sort(byCodeUnits);
    // One object beyond the page tells whether another page follows.
    for await (const key of mergeKeys(walkKeys(this.#rootDir, '', prefix, after), journalled)) {
      if (found.length === limit) return { objects: found, cursor: (found[limit - 1] as ObjectInfo).key };
      const info = await this.head(key);
      // An object deleted during the walk is simply absent from the page.
      if (info !== undefined) found.push(info);
    }
    return { objects: found };
  }

  /**
   * Writes the set as a journal and answers once it is durable; its objects are served from it
   * until they are moved to their own files, every key's lock held until the journal is removed.
   */
  #journal(
    items: readonly PutManyItem[],
    keys: readonly string[],
    onDurabilityCell: ((cell: Int32Array) => void) | undefined,
  ): Promise<void> {
    const journal = journalImage(
      keys,
      items.map(({ body }) => HEADER_SIZE + body.byteLength),
    );
    let at = journal.imagesAt;
    const objects: JournalledObject[] = items.map(({ key, body, sha256 }) => {
      const { dir, name } = this.#objectLocation(key);
      const image = journal.bytes.subarray(at, (at += HEADER_SIZE + body.byteLength));
      image.set(body, HEADER_SIZE);
      const etag = sha256 ?? hash('sha256', image.subarray(HEADER_SIZE), 'hex');
      image.write(`${HEADER_PREFIX}${etag}\n`, 0, 'latin1');
      return { key, dir, name, etag, image, lock: undefined };
    });
    const bytes = journal.bytes.byteLength;
    this.#journalledBytes += bytes;
    const name = journalName(`${TEMP_TAG}-${(tempCount += 1)}`);
    // 1 once the journal is durable, 2 when its write failed; set by the writing thread where it writes it.
    const cell = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const settle = (outcome: 1 | 2) => {
      if (Atomics.compareExchange(cell, 0, 0, outcome) === 0) Atomics.notify(cell, 0);
    };
    // A key another journal being written holds keeps that one's object: its journal is written first (the key's lock).
    for (const object of objects) if (!this.#writing.has(object.key)) this.#writing.set(object.key, { object, cell });
    const written = () => {
      for (const object of objects)
        if (this.#writing.get(object.key)?.object === object) this.#writing.delete(object.key);
    };
    onDurabilityCell?.(cell);
    return new Promise((answer, refuse) => {
      this.#withKeyLocks(keys, async () => {
        try {
          // On a thread, in one step: the event loop may be busy for a while (reading the rest of an archive).
          durableFiles ??= new DurableFiles({ dir: PRIVATE_DIR_MODE, file: PRIVATE_FILE_MODE });
          const root = this.#rootDir;
          if (durableFiles.usable) {
            await durableFiles.writeNamed(
              {
                dir: root,
                temp: `${root}/${journalTempName(name)}`,
                file: `${root}/${name}`,
                bytes: journal.bytes,
              },
              cell,
            );
          } else {
            await mkdir(root, { recursive: true, mode: PRIVATE_DIR_MODE });
            await writeJournal(root, name, journal.bytes, PRIVATE_FILE_MODE);
            settle(1);
          }
        } catch (error) {
          settle(2);
          written();
          refuse(error);
          return;
        }
        for (const object of objects) this.#journalled.set(object.key, object);
        written();
        this.#journalWrittenAt = performance.now();
        answer();
        await this.#moveJournalled(name, objects);
      })
        .catch((error: unknown) => this.#log?.('blob store: a journal could not be moved to its files', error))
        .finally(() => {
          this.#journalledBytes -= bytes;
        });
      const lock = this.#keyLocks.get(keys[0]!);
      for (const object of objects) object.lock = lock;
    });
  }

  /** The journalled object of a key: of a journal not yet removed, or of one being written that its thread has made durable. */
  #journalledObject(key: string): JournalledObject | undefined {
    const journalled = this.#journalled.get(key);
    if (journalled !== undefined) return journalled;
    const writing = this.#writing.get(key);
    return writing !== undefined && Atomics.load(writing.cell, 0) === 1 ? writing.object : undefined;
  }

  /** Moves a journal's objects to their own files durably, then removes the journal (retrying while it cannot). */
  async #moveJournalled(name: string, objects: readonly JournalledObject[]): Promise<void> {
    if (this.#journalMoveDelayMs > 0) await sleep(this.#journalMoveDelayMs);
    await new Promise<void>((moved) => {
      this.#toMove.push({ name, objects, moved });
      if (!this.#moverRunning) {
        this.#moverRunning = true;
        void this.#moveQueued();
      }
    });
    for (const object of objects) if (this.#journalled.get(object.key) === object) this.#journalled.delete(object.key);
  }

  /** Moves the journals queued, together, once none has been written for a while; until none is left. */
  async #moveQueued(): Promise<void> {
    for (;;) {
      const quiet = performance.now() - this.#journalWrittenAt;
      if (quiet < JOURNAL_QUIET_MS && this.#journalledBytes <= JOURNALLED_MAX_BYTES / 2) {
        await sleep(JOURNAL_QUIET_MS - quiet);
        continue;
      }
      const journals = this.#toMove.splice(0);
      await this.#moveOut(journals);
      for (const { moved } of journals) moved();
      // Stopped in the same turn as the queue is found empty, so a journal queued after is never left waiting.
      if (this.#toMove.length === 0) {
        this.#moverRunning = false;
        return;
      }
    }
  }

  async #moveOut(journals: readonly { name: string; objects: readonly JournalledObject[] }[]): Promise<void> {
    const names = journals.map(({ name }) => name);
    for (let attempt = 0; ; attempt += 1) {
      try {
        await writeFilesAtomically(journals.flatMap(({ objects }) => objects));
        await removeJournals(this.#rootDir, names);
        return;
      } catch (error) {
        // The store's directory removed under it (a test's, a deleted data dir): nothing is left to move.
        const left = await Promise.all(
          names.map((name) =>
            access(join(this.#rootDir, name)).then(
              () => true,
              () => false,
            ),
          ),
        );
        if (!left.includes(true)) return;
        if (attempt === 0)
          this.#log?.(`blob store: moving journals ${names.join(', ')} to their files failed; retrying`, error);
        await sleep(Math.min(30_000, 500 * 2 ** attempt));
      }
    }
  }

  async #replayJournals(): Promise<void> {
    for (const name of await leftJournals(this.#rootDir)) {
      const entries = readJournal(await readJournalFile(this.#rootDir, name), join(this.#rootDir, name));
      const files = entries.map(({ key, image }) => ({ ...this.#objectLocation(key), image }));
      for (const { image } of files) parseHeader(image, name);
      await writeFilesAtomically(files);
      await removeJournals(this.#rootDir, [name]);
    }
  }

  #objectPath(key: string): string {
    const { dir, name } = this.#objectLocation(key);
    return `${dir}/${name}`;
  }

  /** The directory an object's file lies in, and the file's name there. */
  #objectLocation(key: string): { dir: string; name: string } {
    // With its slash, so that `b` and `/b` (refused) never share an entry.
    const slash = key.lastIndexOf('/');
    const prefix = key.slice(0, slash + 1);
    const last = key.slice(slash + 1);
    let directory = this.#directories.get(prefix);
    if (directory === undefined) {
      const segments = validateKey(key);
      segments.pop();
      directory = this.#directoryPath(segments);
      if (this.#directories.size >= MAX_REMEMBERED_DIRECTORIES) this.#directories.clear();
      this.#directories.set(prefix, directory);
    } else validateKey(last);
    // A valid segment's name holds no `/` and never starts with `.`: nothing for join to resolve.
    return { dir: directory, name: nameFor(last, OBJECT_SUFFIX) };
  }

  #directoryPath(segments: string[]): string {
    return join(this.#rootDir, ...segments.map((segment) => nameFor(segment, DIRECTORY_SUFFIX)));
  }

  /** Runs `task` once every key's earlier writes and deletes have ended, holding all of them meanwhile. */
  async #withKeyLocks<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const previous: Promise<unknown>[] = [];
    for (const key of keys) {
      const chain = this.#keyLocks.get(key);
      if (chain !== undefined) previous.push(chain);
    }
    const result = previous.length === 0 ? task() : Promise.allSettled(previous).then(task);
    const settled = result.catch(() => undefined);
    for (const key of keys) this.#keyLocks.set(key, settled);
    try {
      return await result;
    } finally {
      for (const key of keys) if (this.#keyLocks.get(key) === settled) this.#keyLocks.delete(key);
    }
  }

  async #withKeyLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#keyLocks.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const settled = result.catch(() => undefined);
    this.#keyLocks.set(key, settled);
    try {
      return await result;
    } finally {
      // Only the last writer in the chain removes it, so the map does not grow with every key.
      if (this.#keyLocks.get(key) === settled) this.#keyLocks.delete(key);
    }
  }
}

/**
 * Writes to a temp file beside the target, flushes it to disk, then renames it over the target:
 * readers see the old object or the new one, never a part, even if the process is killed
 * mid-write; the flush keeps a power cut from leaving a renamed but empty file. Objects are
 * tenants' content, so directories and files are created for their owner only.
 */
async function writeFileAtomically(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  const file = `${dir}/${name}`;
  const temp = `${dir}/.tmp-${TEMP_TAG}-${(tempCount += 1)}`;
  // Written by the shared threads, many files a batch; here only when they cannot take work.
  durableFiles ??= new DurableFiles({ dir: PRIVATE_DIR_MODE, file: PRIVATE_FILE_MODE });
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
 * putMany); `images`, when given, is the buffer they all lie in, given up to the writing thread.
 */
async function writeFilesAtomically(
  files: readonly { dir: string; name: string; image: Uint8Array }[],
  images?: ArrayBuffer,
): Promise<void> {
  durableFiles ??= new DurableFiles({ dir: PRIVATE_DIR_MODE, file: PRIVATE_FILE_MODE });
  if (!durableFiles.usable) {
    await Promise.all(files.map(({ dir, name, image }) => writeFileAtomically(dir, name, image)));
    return;
  }
  await durableFiles.writeMany(
    files.map(({ dir, name, image }) => ({
      dir,
      temp: `${dir}/.tmp-${TEMP_TAG}-${(tempCount += 1)}`,
      file: `${dir}/${name}`,
      bytes: image,
    })),
    images,
  );
}

function parseHeader(bytes: Uint8Array, file: string): string {
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, HEADER_SIZE)).toString(
    'latin1',
  );
  if (header.length < HEADER_SIZE || !header.startsWith(HEADER_PREFIX) || !header.endsWith('\n')) {
    throw new Error(`Object file ${file} has no valid header; it was not written by this store.`);
  }
  return header.slice(HEADER_PREFIX.length, -1);
}

function nullWhenMissing(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

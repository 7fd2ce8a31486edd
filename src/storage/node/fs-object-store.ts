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
// step has moved its objects into their own files, synced those and removed the journal
// (journalled-objects.ts). Every write or delete of a journalled key waits for that removal, so
// replaying a journal left by a crash (done before the store serves) never undoes a later write.

import { readFile as readFileWithCallback } from 'node:fs';
import { open, rmdir, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Log } from '../../core/log.ts';
import {
  assertDeleteBatch,
  DEFAULT_LIST_LIMIT,
  PreconditionFailedError,
  type KeyList,
  type ListOptions,
  type ObjectInfo,
  type ObjectList,
  type ObjectStore,
  type PutManyItem,
  type PutManyOptions,
  type PutOptions,
  type StoredObject,
} from '../object-store.ts';
import { mergeKeys, ObjectLocations, walkKeys } from './object-layout.ts';
import { HEADER_SIZE, layImage, parseHeader, writeFileAtomically, writeFilesAtomically } from './object-files.ts';
import { KeyLocks } from './key-locks.ts';
import { JournalledObjects } from './journalled-objects.ts';

/**
 * Whole-file reads by fs.readFile's callback form, whose open, stat, read and close are chained in
 * C++: the promise form costs a FileHandle and a promise per step, and took about twice the CPU
 * to read an archive's 5,000 small objects.
 */
const readFile = promisify(readFileWithCallback);

export interface FsObjectStoreOptions {
  /** How long a journal waits before its objects are moved to their own files (tests crash a process meanwhile). */
  journalMoveDelayMs?: number;
  /** Where failures of the background move are reported. */
  log?: Log;
}

export class FsObjectStore implements ObjectStore {
  readonly #rootDir: string;
  readonly #locations: ObjectLocations;
  readonly #keyLocks = new KeyLocks();
  readonly #journals: JournalledObjects;
  /** Journals left by a crash, replayed before the store serves anything (see `recover`). */
  #recovered: Promise<void> | undefined;

  constructor(rootDir: string, options: FsObjectStoreOptions = {}) {
    this.#rootDir = rootDir;
    this.#locations = new ObjectLocations(rootDir);
    this.#journals = new JournalledObjects(rootDir, this.#locations, this.#keyLocks, {
      journalMoveDelayMs: options.journalMoveDelayMs ?? 0,
      log: options.log,
    });
  }

  /** A store whose journals left by a crash are replayed: it fails here, rather than at its first call, if one cannot be. */
  static async open(rootDir: string, options: FsObjectStoreOptions = {}): Promise<FsObjectStore> {
    const store = new FsObjectStore(rootDir, options);
    await store.recover();
    return store;
  }

  /** Moves the objects of journals left by a crash into their files; every call waits for it. */
  recover(): Promise<void> {
    this.#recovered ??= this.#journals.replay();
    return this.#recovered;
  }

  /** Resolves once no journal is pending (tests and benchmarks wait for the store to be quiet). */
  async settled(): Promise<void> {
    await this.recover();
    await this.#journals.settled();
  }

  async get(key: string): Promise<StoredObject | undefined> {
    await this.recover();
    const journalled = this.#journals.object(key);
    if (journalled !== undefined) {
      // A copy: the journal's image is shared with the writing threads.
      const body = new Uint8Array(journalled.image.subarray(HEADER_SIZE));
      return { key, size: body.byteLength, etag: journalled.etag, body };
    }
    const file = this.#locations.objectPath(key);
    const bytes = await readFile(file).catch(nullWhenMissing);
    if (bytes === null) return undefined;
    const etag = parseHeader(bytes, file);
    const body = new Uint8Array(bytes.buffer, bytes.byteOffset + HEADER_SIZE, bytes.byteLength - HEADER_SIZE);
    return { key, size: body.byteLength, etag, body };
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    await this.recover();
    const journalled = this.#journals.object(key);
    if (journalled !== undefined)
      return { key, size: journalled.image.byteLength - HEADER_SIZE, etag: journalled.etag };
    const file = this.#locations.objectPath(key);
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
    const { dir, name } = this.#locations.objectLocation(key);
    // The file image doubles as a private copy: the caller may reuse its buffer while this
    // write waits for the key lock.
    const image = Buffer.allocUnsafe(HEADER_SIZE + body.byteLength);
    const etag = layImage(image, body, options.sha256);
    // The same bytes again for a journalled key nothing else waits on: the journal already holds them durably.
    if (
      this.#journals.holds(key, etag) &&
      options.ifNoneMatch === undefined &&
      (options.ifMatch === undefined || options.ifMatch === etag)
    )
      return { key, size: body.byteLength, etag };
    return this.#keyLocks.run(key, async () => {
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
    if (this.#journals.takes(items.length, total)) return this.#journals.write(items, keys, options.onDurabilityCell);
    const images = Buffer.allocUnsafeSlow(total);
    let at = 0;
    const files = items.map(({ key, body, sha256 }) => {
      const { dir, name } = this.#locations.objectLocation(key);
      const image = images.subarray(at, (at += HEADER_SIZE + body.byteLength));
      layImage(image, body, sha256);
      return { dir, name, image };
    });
    await this.#keyLocks.runAll(keys, () => writeFilesAtomically(files, images.buffer));
  }

  async deleteMany(keys: readonly string[]): Promise<void> {
    assertDeleteBatch(keys);
    await Promise.all(keys.map((key) => this.delete(key)));
  }

  async delete(key: string): Promise<void> {
    await this.recover();
    const file = this.#locations.objectPath(key);
    await this.#keyLocks.run(key, async () => {
      await unlink(file).catch(nullWhenMissing);
      // Empty directories are pruned so listing does not walk dead branches; rmdir refuses
      // non-empty ones, and a put racing with this recreates its directory (see writeFileAtomically).
      const segments = key.split('/');
      for (let depth = segments.length - 1; depth > 0; depth -= 1) {
        const removed = await rmdir(this.#locations.directoryPath(segments.slice(0, depth))).then(
          () => true,
          () => false,
        );
        if (!removed) break;
      }
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ObjectList> {
    const { keys, cursor } = await this.listKeys(prefix, options);
    const found: ObjectInfo[] = [];
    for (const key of keys) {
      const info = await this.head(key);
      // An object deleted during the walk is simply absent from the page.
      if (info !== undefined) found.push(info);
    }
    return cursor === undefined ? { objects: found } : { objects: found, cursor };
  }

  /** The keys of a page as `list` would give them, but for objects deleted meanwhile, read from the directory tree alone. */
  async listKeys(prefix: string, options: ListOptions = {}): Promise<KeyList> {
    await this.recover();
    const limit = Math.max(1, options.limit ?? DEFAULT_LIST_LIMIT);
    // The cursor is the last key of the previous page; the walk resumes strictly after it.
    const after = options.cursor;
    const keys: string[] = [];
    const journalled = this.#journals.listedKeys(
      (key) => key.startsWith(prefix) && (after === undefined || key > after),
    );
    // One key beyond the page tells whether another page follows.
    for await (const key of mergeKeys(walkKeys(this.#rootDir, '', prefix, after), journalled)) {
      if (keys.length === limit) return { keys, cursor: keys[limit - 1]! };
      keys.push(key);
    }
    return { keys };
  }
}

function nullWhenMissing(error: NodeJS.ErrnoException): null {
  if (error.code === 'ENOENT') return null;
  throw error;
}

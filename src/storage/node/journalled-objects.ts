// The fs object store's journalled sets: a large set of small objects written as one journal
// file (object-journal.ts), served from its image until a background step has moved its objects
// into their own files, and journals left by a crash replayed.

import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Log } from '../../core/log.ts';
import type { PutManyItem } from '../object-store.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files.ts';
import { byCodeUnits, type ObjectLocations } from './object-layout.ts';
import type { KeyLocks } from './key-locks.ts';
import {
  HEADER_SIZE,
  layImage,
  nextTempTag,
  parseHeader,
  sharedDurableFiles,
  writeFilesAtomically,
} from './object-files.ts';
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

export interface JournalledObjectsOptions {
  /** How long a journal waits before its objects are moved to their own files (tests crash a process meanwhile). */
  journalMoveDelayMs: number;
  /** Where failures of the background move are reported. */
  log: Log | undefined;
}

export class JournalledObjects {
  readonly #rootDir: string;
  readonly #locations: ObjectLocations;
  readonly #keyLocks: KeyLocks;
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

  constructor(rootDir: string, locations: ObjectLocations, keyLocks: KeyLocks, options: JournalledObjectsOptions) {
    this.#rootDir = rootDir;
    this.#locations = locations;
    this.#keyLocks = keyLocks;
    this.#journalMoveDelayMs = options.journalMoveDelayMs;
    this.#log = options.log;
  }

  /** Whether a set of `count` objects whose files take `total` bytes is written as a journal. */
  takes(count: number, total: number): boolean {
    return count >= JOURNAL_FROM && total <= JOURNAL_MAX_BYTES && this.#journalledBytes + total <= JOURNALLED_MAX_BYTES;
  }

  /** Resolves once no journal is pending. */
  async settled(): Promise<void> {
    while (this.#journalled.size > 0 || this.#writing.size > 0) {
      const objects = [...this.#journalled.values(), ...[...this.#writing.values()].map(({ object }) => object)];
      await Promise.all([...new Set(objects.map((object) => object.lock))]);
    }
  }

  /** Whether the key's journal already holds these bytes durably and nothing else waits on the key. */
  holds(key: string, etag: string): boolean {
    const journalled = this.#journalled.get(key);
    return journalled?.etag === etag && this.#keyLocks.chain(key) === journalled.lock;
  }

  /** The journalled keys `listed` accepts, served ones only, in key order. */
  listedKeys(listed: (key: string) => boolean): string[] {
    const journalled: string[] = [];
    for (const key of this.#journalled.keys()) if (listed(key)) journalled.push(key);
    for (const [key, { cell }] of this.#writing)
      if (listed(key) && !this.#journalled.has(key) && Atomics.load(cell, 0) === 1) journalled.push(key);
    journalled.sort(byCodeUnits);
    return journalled;
  }

  /**
   * Writes the set as a journal and answers once it is durable; its objects are served from it
   * until they are moved to their own files, every key's lock held until the journal is removed.
   */
  write(
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
      const { dir, name } = this.#locations.objectLocation(key);
      const image = journal.bytes.subarray(at, (at += HEADER_SIZE + body.byteLength));
      const etag = layImage(image, body, sha256);
      return { key, dir, name, etag, image, lock: undefined };
    });
    const bytes = journal.bytes.byteLength;
    this.#journalledBytes += bytes;
    const name = journalName(nextTempTag());
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
      this.#keyLocks
        .runAll(keys, async () => {
          try {
            // On a thread, in one step: the event loop may be busy for a while (reading the rest of an archive).
            const durableFiles = sharedDurableFiles();
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
      const lock = this.#keyLocks.chain(keys[0]!);
      for (const object of objects) object.lock = lock;
    });
  }

  /** The journalled object of a key: of a journal not yet removed, or of one being written that its thread has made durable. */
  object(key: string): JournalledObject | undefined {
    const journalled = this.#journalled.get(key);
    if (journalled !== undefined) return journalled;
    const writing = this.#writing.get(key);
    return writing !== undefined && Atomics.load(writing.cell, 0) === 1 ? writing.object : undefined;
  }

  /** Moves the objects of journals left by a crash into their files (before the store serves anything). */
  async replay(): Promise<void> {
    for (const name of await leftJournals(this.#rootDir)) {
      const entries = readJournal(await readJournalFile(this.#rootDir, name), join(this.#rootDir, name));
      const files = entries.map(({ key, image }) => ({ ...this.#locations.objectLocation(key), image }));
      for (const { image } of files) parseHeader(image, name);
      await writeFilesAtomically(files);
      await removeJournals(this.#rootDir, [name]);
    }
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
}

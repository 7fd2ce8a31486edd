// Reclaims single contents of a store that workspaces in several databases share (a family of
// forks on the Cloudflare home): mark and sweep across the family's readers, run by the family.
//
// A listing page at a time, the family asks every reader which of the page's contents it needs
// (shared-store-reader.ts). A content no reader needs is recorded with the time it was first found
// so; one found so for longer than the grace is doomed in the next round: each reader that does
// not need it records it as doomed when it answers (doomed-blobs.ts), and from then on asks the
// family before anything there names it (a write, a runner's lookup). Such a rescue takes it off
// the list, or, once its delete is under way, waits for the delete, after which the reader writes
// it again. A content is deleted only when every reader said, in this round, that it needs it not
// and none rescued it since. A fork joining meanwhile, a fork still arriving, or a reader that
// cannot answer stops the round before anything is deleted: a fork's rows are read only after it
// joined (cloudflare/workspace-fork.ts), so no content they name can go unseen. Killed half-way, a
// sweep has only deleted contents no reader needed; the readers' doom records are replaced by the
// next round's.
import { MAX_SWEEP_PAGE } from '../contract/object-calls.ts';
import { listKeys, MAX_DELETE_BATCH, type ObjectStore } from '../storage/object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { storePrefix } from './blob-store.ts';
import type { SharedBlobCheck } from './shared-store-reader.ts';
import type { StoreReader } from './store-families.ts';

const statements = `
CREATE TABLE IF NOT EXISTS unreferenced (hash TEXT PRIMARY KEY, since INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sweep_rounds (store TEXT PRIMARY KEY, round INTEGER NOT NULL) WITHOUT ROWID;
`;

/** A reader as the family knows it; `workspace` is null for readers recorded before names were kept. */
export interface FamilyReader {
  uid: string;
  workspace: string | null;
  /** When it joined (ms since the epoch). */
  joinedAt: number;
}

/** How the family reaches its readers' databases. */
export interface FamilyMembers {
  check(
    reader: StoreReader,
    question: { store: string; round: number; hashes: string[]; doom: string[] },
  ): Promise<SharedBlobCheck>;
  release(reader: StoreReader, store: string, hashes: string[]): Promise<void>;
}

/** A reader the family can ask. */
type NamedReader = StoreReader & { joinedAt: number };

export interface FamilySweepResult {
  examined: number;
  deleted: number;
  /** Why the sweep stopped before its end, deleting nothing more: then it is tried again later. */
  stopped?: 'no readers' | 'readers without names' | 'fork arriving' | 'fork joined';
  /** Readers their databases no longer know, long after they joined: the caller removes them. */
  gone: string[];
}

export interface FamilySweepOptions {
  graceMs: number;
  /** A reader whose database does not know it this long after it joined is taken as gone (its leave was lost). */
  absentAfterMs: number;
  now?: () => number;
  log?: (message: string, error?: unknown) => void;
}

export class FamilySweep {
  /** The contents of the page under way that the readers were told are doomed, while their answers come. */
  private doomed: Set<string> | undefined;
  /** Those of them a reader rescued meanwhile. */
  private rescued = new Set<string>();
  /** The delete under way, which a rescue of one of its contents waits for. */
  private deleting: { hashes: Set<string>; done: Promise<void> } | undefined;
  /** Counts joins, so a round sees one that came while it asked. */
  private joins = 0;
  private running = false;
  private readonly now: () => number;

  constructor(
    private readonly db: SqlDatabase,
    private readonly objects: ObjectStore,
    private readonly members: FamilyMembers,
    private readonly options: FamilySweepOptions,
  ) {
    db.script(statements);
    this.now = options.now ?? Date.now;
  }

  /** A reader joined: a round under way deletes nothing. */
  joined(): void {
    this.joins += 1;
  }

  /** When the next sweep could delete something: the earliest end of a grace, if any content waits one. */
  nextDue(): number | undefined {
    const row = this.db.query<{ since: number | null }>('SELECT min(since) AS since FROM unreferenced')[0];
    return row?.since === null || row?.since === undefined ? undefined : row.since + this.options.graceMs;
  }

  /** A reader is about to name `hash`: keeps it from the round under way, or waits for its delete to land. */
  async rescue(hash: string): Promise<void> {
    const deleting = this.deleting;
    if (deleting?.hashes.has(hash)) {
      await deleting.done;
      return;
    }
    if (this.doomed?.has(hash)) this.rescued.add(hash);
  }

  /** One sweep of `store` across `readers`; concurrent calls return at once. */
  async sweep(store: string, readers: readonly FamilyReader[]): Promise<FamilySweepResult> {
    const result: FamilySweepResult = { examined: 0, deleted: 0, gone: [] };
    if (this.running) return result;
    if (readers.length === 0) return { ...result, stopped: 'no readers' };
    // A reader recorded before names were kept cannot be asked: its family's contents stay.
    if (readers.some((reader) => reader.workspace === null)) return { ...result, stopped: 'readers without names' };
    this.running = true;
    try {
      const named = readers.map((reader) => ({ ...reader, workspace: reader.workspace! }));
      const round = this.nextRound(store);
      const since = new Map(
        this.db
          .query<{ hash: string; since: number }>('SELECT hash, since FROM unreferenced')
          .map((row) => [row.hash, row.since]),
      );
      const seen = new Set<string>();
      const gone = new Set<string>();
      const prefix = `${storePrefix(store)}blobs/`;
      let cursor: string | undefined;
      do {
        const page = await listKeys(this.objects, prefix, cursor === undefined ? {} : { cursor });
        cursor = page.cursor;
        for (let at = 0; at < page.keys.length; at += MAX_SWEEP_PAGE) {
          const slice = page.keys.slice(at, at + MAX_SWEEP_PAGE);
          const keys = new Map(slice.map((key) => [key.slice(key.lastIndexOf('/') + 1), key]));
          result.examined += keys.size;
          const stopped = await this.sweepPage(store, round, named, keys, since, seen, gone, result);
          if (stopped) return { ...result, stopped, gone: [...gone] };
        }
      } while (cursor !== undefined);
      // Records of contents gone from the store go too.
      this.db.transaction(() => {
        for (const hash of since.keys())
          if (!seen.has(hash)) this.db.query('DELETE FROM unreferenced WHERE hash = ?', hash);
      });
      return { ...result, gone: [...gone] };
    } finally {
      this.running = false;
      this.doomed = undefined;
    }
  }

  private async sweepPage(
    store: string,
    round: number,
    readers: readonly NamedReader[],
    /** The page's object keys by content hash. */
    keys: ReadonlyMap<string, string>,
    since: Map<string, number>,
    seen: Set<string>,
    gone: Set<string>,
    result: FamilySweepResult,
  ): Promise<FamilySweepResult['stopped']> {
    const hashes = [...keys.keys()];
    const askedAt = this.now();
    const doom = hashes.filter((hash) => {
      const first = since.get(hash);
      return first !== undefined && askedAt - first >= this.options.graceMs;
    });
    const joinsBefore = this.joins;
    this.doomed = new Set(doom);
    this.rescued = new Set();
    try {
      const answers = await Promise.all(
        readers.map((reader) =>
          this.members.check({ uid: reader.uid, workspace: reader.workspace }, { store, round, hashes, doom }),
        ),
      );
      const needed = new Set<string>();
      let arriving = false;
      answers.forEach((answer, index) => {
        const reader = readers[index]!;
        if (answer.reader === 'reading') for (const hash of answer.needed) needed.add(hash);
        else if (answer.reader === 'receiving') arriving = true;
        // Joined a moment ago and not begun yet: it may still arrive with rows naming anything.
        else if (askedAt - reader.joinedAt < this.options.absentAfterMs) arriving = true;
        else gone.add(reader.uid);
      });
      if (arriving) return 'fork arriving';
      if (this.joins !== joinsBefore) return 'fork joined';
      const now = this.now();
      this.db.transaction(() => {
        for (const hash of hashes) {
          seen.add(hash);
          if (needed.has(hash)) {
            if (since.delete(hash)) this.db.query('DELETE FROM unreferenced WHERE hash = ?', hash);
          } else if (!since.has(hash)) {
            since.set(hash, now);
            this.db.query('INSERT OR REPLACE INTO unreferenced (hash, since) VALUES (?, ?)', hash, now);
          }
        }
      });
      const doomed = doom.filter((hash) => !needed.has(hash) && !this.rescued.has(hash));
      // From here a rescue of one of these waits until all are deleted: set before the first delete is sent.
      this.doomed = undefined;
      let finished!: () => void;
      this.deleting = { hashes: new Set(doomed), done: new Promise<void>((resolve) => (finished = resolve)) };
      try {
        for (let at = 0; at < doomed.length; at += MAX_DELETE_BATCH) {
          const batch = doomed.slice(at, at + MAX_DELETE_BATCH);
          await this.objects.deleteMany(batch.map((hash) => keys.get(hash)!));
          result.deleted += batch.length;
          this.db.transaction(() => {
            for (const hash of batch) {
              since.delete(hash);
              seen.delete(hash);
              this.db.query('DELETE FROM unreferenced WHERE hash = ?', hash);
            }
          });
        }
      } finally {
        this.deleting = undefined;
        finished();
      }
      return undefined;
    } finally {
      this.doomed = undefined;
      if (doom.length > 0) await this.releaseAll(readers, store, doom);
    }
  }

  /** Lets the readers go of this round's doomed contents; one that misses it drops them at the next round. */
  private async releaseAll(readers: readonly StoreReader[], store: string, doom: string[]): Promise<void> {
    await Promise.all(
      readers.map((reader) =>
        this.members
          .release({ uid: reader.uid, workspace: reader.workspace }, store, doom)
          .catch((error: unknown) => this.options.log?.('could not tell a reader a sweep round is over', error)),
      ),
    );
  }

  private nextRound(store: string): number {
    return this.db.transaction(() => {
      const round =
        (this.db.query<{ round: number }>('SELECT round FROM sweep_rounds WHERE store = ?', store)[0]?.round ?? 0) + 1;
      this.db.query('INSERT OR REPLACE INTO sweep_rounds (store, round) VALUES (?, ?)', store, round);
      return round;
    });
  }
}

// The Cloudflare home's record of who reads a store that forks in several objects share (see
// workspace/store-families.ts): one Durable Object per such store, named by it, holding the
// workspaces (uid and name) that read it. When the last one leaves, it deletes the store from R2; an
// alarm finishes a deletion that an eviction cut short. While readers remain, its alarm sweeps the
// store's single contents no reader needs (workspace/family-sweep.ts), an interval after a reader
// says its references changed. Forks, deletes, readers' sweeps and their rescues call it; no tool call does.
import { Hono } from 'hono';
import { storeFamilyCalls, workspaceCalls } from '../contract/object-calls.ts';
import { ToolError } from '../core/errors.ts';
import { consoleLog } from '../core/log.ts';
import type { AppEnv } from '../http/app-deps.ts';
import { errorResponse } from '../http/error-response.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import { deletePrefix, type ObjectStore } from '../storage/object-store.ts';
import { R2ObjectStore } from '../storage/r2-object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { storePrefix } from '../workspace/blob-store.ts';
import { FamilySweep, type FamilyReader } from '../workspace/family-sweep.ts';
import type { StoreFamilies, StoreReader } from '../workspace/store-families.ts';
import {
  callObject,
  callServer,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  storeFamilyObject,
  workspaceObject,
  type DurableObjectState,
  type Env,
} from './bindings.ts';
import { objectRequestCounter } from './object-requests.ts';

/** A reader its object does not know this long after it joined is taken as gone (its fork never began, or its leave was lost). */
const ABSENT_AFTER_MS = 10 * 60 * 1000;

// readers.workspace and joined_at are null in rows made before they were kept.
const schema = `
CREATE TABLE IF NOT EXISTS readers (uid TEXT PRIMARY KEY, workspace TEXT, joined_at INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS joined (store TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deletion (store TEXT PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
`;

export class StoreFamilyObject {
  private readonly app: Hono<AppEnv>;
  private readonly db: SqlDatabase;
  private readonly objects: ObjectStore;
  private readonly sweeper: FamilySweep;
  private readonly intervalMs: number;

  private readonly countRequest: () => void;

  constructor(
    private readonly state: DurableObjectState,
    env: Env,
  ) {
    const settings = readSettings(env);
    this.countRequest = objectRequestCounter(state.storage, env);
    this.db = new DurableObjectSqlDatabase(state.storage);
    this.db.script(schema);
    try {
      this.db.query('SELECT workspace, joined_at FROM readers LIMIT 0');
    } catch {
      this.db.script(
        'ALTER TABLE readers ADD COLUMN workspace TEXT; ALTER TABLE readers ADD COLUMN joined_at INTEGER;',
      );
    }
    this.objects = new R2ObjectStore(env.BLOBS);
    this.intervalMs = settings.blobGc.intervalMs;
    this.sweeper = new FamilySweep(
      this.db,
      this.objects,
      {
        check: async (reader, { store, round, hashes, doom }) =>
          (await callObject(workspaceObject(env, reader.workspace), workspaceCalls.sharedStoreCheck, {
            store,
            uid: reader.uid,
            round,
            hashes,
            doom,
          }))!,
        release: async (reader, store, hashes) => {
          await callObject(workspaceObject(env, reader.workspace), workspaceCalls.sharedStoreRelease, {
            store,
            hashes,
          });
        },
      },
      { graceMs: settings.blobGc.graceMs, absentAfterMs: ABSENT_AFTER_MS, log: consoleLog },
    );
    // Only calls from the other objects: nothing here is routed from outside.
    const internal = new Hono<AppEnv>();
    internal.use('*', internalOnly());
    const serve = callServer(internal, settings.maxBodyBytes);
    serve(storeFamilyCalls.join, ({ store, readers }) => this.join(store, readers));
    serve(storeFamilyCalls.leave, ({ store, reader }) => this.leave(store, reader));
    serve(storeFamilyCalls.changed, ({ store }) => this.changed(store));
    serve(storeFamilyCalls.rescue, ({ store, hash }) => {
      this.assertOwnStore(store);
      return this.sweeper.rescue(hash);
    });
    const app = new Hono<AppEnv>();
    app.onError((error) => errorResponse(error, (internalError) => consoleLog('internal error', internalError)));
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);
    this.app = app;
  }

  fetch(request: Request): Promise<Response> | Response {
    this.countRequest();
    return this.app.fetch(request);
  }

  /** Finishes a deletion that was cut short, or sweeps the store. */
  async alarm(): Promise<void> {
    const deletion = this.db.query<{ store: string; done: number }>('SELECT store, done FROM deletion')[0];
    if (deletion) {
      if (deletion.done === 0) await this.deleteStore(deletion.store);
      return;
    }
    const store = this.db.query<{ store: string }>('SELECT store FROM joined')[0]?.store;
    if (store === undefined) return;
    let next = Date.now() + this.intervalMs;
    try {
      const result = await this.sweeper.sweep(store, this.readers());
      for (const uid of result.gone) await this.leave(store, uid);
      // Stopped by a fork: again an interval later. Stopped for good (a reader without a name): when
      // a reader next tells of a change. Else when the next content's grace ends, if one waits.
      const due = this.sweeper.nextDue();
      if (result.stopped === 'readers without names' || result.stopped === 'no readers') next = Infinity;
      else if (result.stopped === undefined) next = due === undefined ? Infinity : Math.max(next, due);
    } catch (error) {
      consoleLog('could not sweep a shared store; the next sweep tries again', error);
    }
    if (next !== Infinity && this.db.query('SELECT store FROM deletion').length === 0) await this.planSweep(next);
  }

  /** A reader's references changed: a sweep an interval from now, unless one comes sooner. */
  private async changed(store: string): Promise<void> {
    this.assertOwnStore(store);
    if (this.db.query('SELECT store FROM deletion').length > 0) return;
    await this.planSweep(Date.now() + this.intervalMs);
  }

  private async planSweep(at: number): Promise<void> {
    const current = await this.state.storage.getAlarm();
    if (current === null || current > at) await this.state.storage.setAlarm(at);
  }

  private readers(): FamilyReader[] {
    return this.db
      .query<{ uid: string; workspace: string | null; joined_at: number | null }>(
        'SELECT uid, workspace, joined_at FROM readers ORDER BY uid',
      )
      .map((row) => ({ uid: row.uid, workspace: row.workspace, joinedAt: row.joined_at ?? 0 }));
  }

  /** Each object serves the one store it is named by: a call naming another is a mistake of the caller, refused. */
  private assertOwnStore(store: string): void {
    const own = this.db.query<{ store: string }>('SELECT store FROM joined')[0]?.store;
    if (own !== undefined && own !== store)
      throw new ToolError('internal', `This store family object holds ${own}, not ${store}.`, {});
  }

  private join(store: string, readers: readonly StoreReader[]): void {
    this.assertOwnStore(store);
    if (this.db.query('SELECT store FROM deletion').length > 0)
      throw new ToolError(
        'conflict',
        'The workspace being forked was deleted meanwhile (its contents are being deleted); fork another one.',
        {},
      );
    const now = Date.now();
    this.db.transaction(() => {
      this.db.query('INSERT OR IGNORE INTO joined (store) VALUES (?)', store);
      // A reader joining again (the source of a second fork) keeps when it first joined, and gains its name.
      for (const { uid, workspace } of readers)
        this.db.query(
          `INSERT INTO readers (uid, workspace, joined_at) VALUES (?, ?, ?)
           ON CONFLICT (uid) DO UPDATE SET workspace = excluded.workspace, joined_at = coalesce(joined_at, excluded.joined_at)`,
          uid,
          workspace,
          now,
        );
    });
    this.sweeper.joined();
  }

  private async leave(store: string, reader: string): Promise<void> {
    this.assertOwnStore(store);
    const last = this.db.transaction(() => {
      // A store shared before families were kept has none: its readers are unknown, so it stays.
      if (this.db.query('SELECT store FROM joined').length === 0) return false;
      this.db.query('DELETE FROM readers WHERE uid = ?', reader);
      if (this.db.query('SELECT uid FROM readers LIMIT 1').length > 0) return false;
      this.db.query('INSERT OR IGNORE INTO deletion (store, done) VALUES (?, 0)', store);
      return true;
    });
    if (!last) return;
    // Should the object be evicted mid-way, the alarm deletes the rest.
    await this.state.storage.setAlarm(Date.now() + 60_000);
    await this.deleteStore(store);
  }

  private async deleteStore(store: string): Promise<void> {
    await deletePrefix(this.objects, storePrefix(store));
    this.db.query('UPDATE deletion SET done = 1 WHERE store = ?', store);
  }
}

/** The store families as the workspace objects reach them: one object per store. */
export function storeFamilies(env: Env): StoreFamilies {
  return {
    join: async (store, readers) => {
      await callObject(storeFamilyObject(env, store), storeFamilyCalls.join, { store, readers: [...readers] });
    },
    leave: async (store, reader) => {
      await callObject(storeFamilyObject(env, store), storeFamilyCalls.leave, { store, reader });
    },
    changed: async (store) => {
      await callObject(storeFamilyObject(env, store), storeFamilyCalls.changed, { store });
    },
    rescue: async (store, hash) => {
      await callObject(storeFamilyObject(env, store), storeFamilyCalls.rescue, { store, hash });
    },
  };
}

// The Cloudflare home's record of who reads a store that forks in several objects share (see
// workspace/store-families.ts): one Durable Object per such store, named by it, holding the uids of
// the workspaces that read it. When the last one leaves, it deletes the store from R2; an alarm
// finishes a deletion that an eviction cut short. Only forks and deletes call it.
import { Hono } from 'hono';
import { storeFamilyCalls } from '../contract/object-calls.ts';
import { ToolError } from '../core/errors.ts';
import { consoleLog } from '../core/log.ts';
import type { AppEnv } from '../http/app-deps.ts';
import { errorResponse } from '../http/error-response.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import { deletePrefix, type ObjectStore } from '../storage/object-store.ts';
import { R2ObjectStore } from '../storage/r2-object-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { storePrefix } from '../workspace/blob-store.ts';
import type { StoreFamilies } from '../workspace/store-families.ts';
import {
  callObject,
  callServer,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  storeFamilyObject,
  type DurableObjectState,
  type Env,
} from './bindings.ts';

const schema = `
CREATE TABLE IF NOT EXISTS readers (uid TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS joined (store TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS deletion (store TEXT PRIMARY KEY, done INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
`;

export class StoreFamilyObject {
  private readonly app: Hono<AppEnv>;
  private readonly db: SqlDatabase;
  private readonly objects: ObjectStore;

  constructor(
    private readonly state: DurableObjectState,
    env: Env,
  ) {
    const settings = readSettings(env);
    this.db = new DurableObjectSqlDatabase(state.storage);
    this.db.script(schema);
    this.objects = new R2ObjectStore(env.BLOBS);
    // Only calls from the other objects: nothing here is routed from outside.
    const internal = new Hono<AppEnv>();
    internal.use('*', internalOnly());
    const serve = callServer(internal, settings.maxBodyBytes);
    serve(storeFamilyCalls.join, ({ store, readers }) => this.join(store, readers));
    serve(storeFamilyCalls.leave, ({ store, reader }) => this.leave(store, reader));
    const app = new Hono<AppEnv>();
    app.onError((error) => errorResponse(error, (internalError) => consoleLog('internal error', internalError)));
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);
    this.app = app;
  }

  fetch(request: Request): Promise<Response> | Response {
    return this.app.fetch(request);
  }

  /** Finishes a deletion that was cut short. */
  async alarm(): Promise<void> {
    const deletion = this.db.query<{ store: string; done: number }>('SELECT store, done FROM deletion')[0];
    if (deletion && deletion.done === 0) await this.deleteStore(deletion.store);
  }

  /** Each object serves the one store it is named by: a call naming another is a mistake of the caller, refused. */
  private assertOwnStore(store: string): void {
    const own = this.db.query<{ store: string }>('SELECT store FROM joined')[0]?.store;
    if (own !== undefined && own !== store)
      throw new ToolError('internal', `This store family object holds ${own}, not ${store}.`, {});
  }

  private join(store: string, readers: readonly string[]): void {
    this.assertOwnStore(store);
    if (this.db.query('SELECT store FROM deletion').length > 0)
      throw new ToolError(
        'conflict',
        'The workspace being forked was deleted meanwhile (its contents are being deleted); fork another one.',
        {},
      );
    this.db.transaction(() => {
      this.db.query('INSERT OR IGNORE INTO joined (store) VALUES (?)', store);
      for (const uid of readers) this.db.query('INSERT OR IGNORE INTO readers (uid) VALUES (?)', uid);
    });
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
  };
}

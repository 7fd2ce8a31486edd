// The Cloudflare home's key object: one Durable Object per key, named by the key's id (which its
// secret determines), holding its record, its rate limit and its quota ledger, and serving the key's
// usage and approval listings. A key's traffic reaches its own object and no other, so keys never
// share one object's throughput.
import { Hono } from 'hono';
import { dispatcherCalls, keyCalls, workspaceCalls } from '../contract/object-calls.ts';
import { readSetting } from '../contract/settings.ts';
import { sha256Hex } from '../core/content-hash.ts';
import { ToolError } from '../core/errors.ts';
import { consoleLog as log } from '../core/log.ts';
import { appLimitsOf, type AppEnv } from '../http/app-deps.ts';
import { createBaseApp } from '../http/app.ts';
import { approvalRoutes } from '../http/approval-routes.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import { usageRoutes } from '../http/usage-routes.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { errorResponse } from '../http/error-response.ts';
import { BOOTSTRAP_KEY_ID, BOOTSTRAP_RUNNER_KEY_ID, KeyStore } from '../keys/key-store.ts';
import { RateLimiter } from '../metering/rate-limiter.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import {
  callObject,
  dispatcherObject,
  callServer,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  workspaceObject,
  type DurableObjectState,
  type Env,
} from './bindings.ts';
import { KeyIdentities, keyIdOfHash } from './key-identity.ts';
import { ScopedListings } from './scoped-listings.ts';
import { QuotaLedgerTable } from './quota-ledger-table.ts';
import { objectRequestCounter } from './object-requests.ts';

/** Workspace objects told of a revocation at once. */
const FAN_OUT = 16;

export class KeyObject {
  private readonly app: Hono<AppEnv>;
  /** The key's usage and approval listings and its approvals stream, built on the first such request. */
  private listings: { app: Hono<AppEnv>; views: ScopedListings } | undefined;
  private readonly db: SqlDatabase;
  private held: { keys: KeyStore; ledger: QuotaLedgerTable; watchers: KeyWatchers } | undefined;
  /** Whether the configured key this object may hold was set from the configuration in this instance. */
  private configured = false;
  private readonly countRequest: () => void;

  constructor(
    state: DurableObjectState,
    private readonly env: Env,
  ) {
    this.db = new DurableObjectSqlDatabase(state.storage);
    this.countRequest = objectRequestCounter(state.storage, env);
    const limiter = new RateLimiter();
    const internal = new Hono<AppEnv>();
    internal.use('*', internalOnly());
    const serve = callServer(internal, readSettings(env).maxBodyBytes);
    serve(keyCalls.authenticate, async ({ id, secret, watcher }) => {
      const held = await this.holding(id);
      const key = await held?.keys.authenticate(secret);
      if (!held || key?.id !== id) return undefined;
      if (watcher !== undefined) held.watchers.add(watcher);
      return key;
    });
    serve(keyCalls.key, async ({ id, watcher }) => {
      const held = await this.holding(id);
      const key = held?.keys.get(id);
      if (key && watcher !== undefined) held!.watchers.add(watcher);
      return key;
    });
    serve(keyCalls.notifySecret, async ({ id }) => ({
      secret: (await this.holding(id))?.keys.notifySecret(id) ?? null,
    }));
    serve(keyCalls.create, async ({ id, secret, input }) => {
      if ((await keyIdOfHash(await sha256Hex(new TextEncoder().encode(secret)))) !== id)
        throw new ToolError('invalid_argument', `The secret does not belong to key ${id}; derive the id from it.`);
      const held = this.open();
      if (held.keys.list().length > 0 || held.keys.notifySecret(id) !== undefined)
        throw new ToolError('conflict', `Key ${id} exists already; create the key again for a new secret.`);
      const created = await held.keys.create(input, { id, secret });
      return { key: created.key, notifySecret: created.notifySecret ?? null };
    });
    serve(keyCalls.revoke, async ({ id }) => {
      const held = await this.holding(id);
      if (!held) return { revoked: false };
      const revoked = held.keys.revoke(id);
      // Also after a revocation whose telling failed in part: those copies are dropped now.
      await held.watchers.tellChanged(this.env, id);
      return { revoked };
    });
    serve(keyCalls.admit, async ({ id, watcher, perMinute, quota, usesProcessTime }) => {
      const held = await this.holding(id);
      const key = held?.keys.get(id);
      if (!held || !key) return undefined;
      if (perMinute > 0) limiter.take(id, perMinute);
      if (quota) held.ledger.admit(key, usesProcessTime);
      if (watcher !== undefined) held.watchers.add(watcher);
      return key;
    });
    serve(keyCalls.approvalChanged, ({ approval }) => ({
      watching: this.listings?.views.approvalChanged(approval) ?? false,
    }));
    serve(keyCalls.quotaSpent, ({ key }) => ({ spent: this.open().ledger.processSecondsSpent(key) }));
    serve(keyCalls.quotaSeconds, ({ id, startedAt, seconds }) => this.open().ledger.addSeconds(id, startedAt, seconds));
    const app = new Hono<AppEnv>();
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);
    app.onError((error) => errorResponse(error, (failure) => log('a key object call failed', failure)));
    this.app = app;
  }

  fetch(request: Request): Promise<Response> {
    this.countRequest();
    const internal = new URL(request.url).pathname.startsWith(INTERNAL_PREFIX);
    return Promise.resolve((internal ? this.app : this.listingApp()).fetch(request));
  }

  /**
   * The routes the Worker sends here (usage, approvals listing and stream): served for the key this
   * object holds, authenticated here, asking the workspace objects in its scope and no other.
   */
  private listingApp(): Hono<AppEnv> {
    if (this.listings) return this.listings.app;
    const settings = readSettings(this.env);
    const identities = new KeyIdentities(this.env);
    const keys = {
      authenticate: async (secret: string) => {
        const identity = await identities.of(secret);
        const held = identity && (await this.holding(identity.id));
        const key = await held?.keys.authenticate(secret);
        return key?.id === identity?.id ? key : undefined;
      },
    };
    const views = new ScopedListings(this.env, async (id) => (await this.holding(id))?.keys.get(id) !== undefined);
    const tools = new ToolRegistry(builtinTools);
    const limits = appLimitsOf(settings);
    const app = createBaseApp({ keys, tools, runnerProtocol: true, sandbox: settings.sandbox });
    app.route('/v1', usageRoutes({ usage: views }));
    app.route('/v1', approvalRoutes({ approvals: views, limits, keepAliveMs: settings.streamKeepAliveMs }));
    assertRoutesGuarded(app);
    this.listings = { app, views };
    return app;
  }

  /**
   * What this object holds, when it holds a key: an object asked about an unknown secret's id
   * stores nothing, so guessed secrets leave no objects behind. The two configured keys are set
   * from the configuration on first use (and revoked here when it no longer names them).
   */
  private async holding(id: string): Promise<KeyObject['held']> {
    if (!this.configured && (id === BOOTSTRAP_KEY_ID || id === BOOTSTRAP_RUNNER_KEY_ID)) {
      const held = this.open();
      const admin = readSetting(this.env, 'TOOLGATE_API_KEY', 'cloudflare');
      if (id === BOOTSTRAP_KEY_ID && admin) await held.keys.ensureBootstrapAdmin(admin);
      if (id === BOOTSTRAP_RUNNER_KEY_ID)
        await held.keys.ensureBootstrapRunner(readSetting(this.env, 'TOOLGATE_RUNNER_KEY', 'cloudflare'));
      this.configured = true;
    }
    if (this.held) return this.held;
    const [table] = this.db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'api_keys'");
    return table === undefined ? undefined : this.open();
  }

  private open(): NonNullable<KeyObject['held']> {
    this.held ??= {
      keys: new KeyStore(this.db),
      ledger: new QuotaLedgerTable(this.db),
      watchers: new KeyWatchers(this.db),
    };
    return this.held;
  }
}

/**
 * The workspace objects that hold a copy of this key: each is told when the key changes, before
 * the change is answered, so a revoked key is refused from the next request on.
 */
class KeyWatchers {
  private readonly known = new Set<string>();

  constructor(private readonly db: SqlDatabase) {
    db.script('CREATE TABLE IF NOT EXISTS key_watchers (workspace TEXT PRIMARY KEY)');
  }

  add(workspace: string): void {
    if (this.known.has(workspace)) return;
    this.db.query('INSERT INTO key_watchers (workspace) VALUES (?) ON CONFLICT (workspace) DO NOTHING', workspace);
    this.known.add(workspace);
  }

  /** Tells every watcher; one that could not be told stays, and is told again by the next change or revocation. */
  async tellChanged(env: Env, id: string): Promise<void> {
    const names = this.db
      .query<{ workspace: string }>('SELECT workspace FROM key_watchers')
      .map((row) => row.workspace);
    const failures: unknown[] = [];
    for (let start = 0; start < names.length; start += FAN_OUT) {
      await Promise.all(
        names.slice(start, start + FAN_OUT).map(async (workspace) => {
          try {
            await tellOne(env, workspace, id);
            this.db.query('DELETE FROM key_watchers WHERE workspace = ?', workspace);
            this.known.delete(workspace);
          } catch (error) {
            failures.push(error);
          }
        }),
      );
    }
    if (failures.length > 0) {
      log(`could not tell ${failures.length} workspace objects that key ${id} changed`, failures[0]);
      throw new ToolError(
        'unavailable',
        `Key ${id} is revoked, but not every copy of it was dropped yet; retry the call.`,
      );
    }
  }
}

/** Pauses before telling a watcher again: a call between objects can fail once (an object restarting) and pass the next time. */
const TELL_AGAIN_MS = [50, 250];

/** Tells one watcher, by its name, that key `id` changed; a failure is tried again after each pause of TELL_AGAIN_MS. */
async function tellOne(env: Env, watcher: string, id: string): Promise<void> {
  const shard = /^dispatcher:(\d+)$/.exec(watcher)?.[1];
  for (let attempt = 0; ; attempt += 1) {
    try {
      if (shard === undefined) await callObject(workspaceObject(env, watcher), workspaceCalls.keyChanged, { id });
      else await callObject(dispatcherObject(env, Number(shard)), dispatcherCalls.keyChanged, { id });
      return;
    } catch (error) {
      const pause = TELL_AGAIN_MS[attempt];
      if (pause === undefined) throw error;
      log(`could not tell ${watcher} that key ${id} changed; trying again`, error);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

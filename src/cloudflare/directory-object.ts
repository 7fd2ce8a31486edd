// The Cloudflare home's directory: one Durable Object for what names no workspace and no tool call
// needs (the key listing, webhooks, the registry of workspace objects). Usage and approval listings
// are the callers' key objects' (scoped-listings.ts); only a listing whose scope is every workspace
// reads the registry here.
import { Hono } from 'hono';
import { HookStore } from '../hooks/hook-store.ts';
import { appLimitsOf, type AppEnv } from '../http/app-deps.ts';
import { createBaseApp } from '../http/app.ts';
import { hookRoutes } from '../http/hook-routes.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import { keyRoutes } from '../http/key-routes.ts';
import { toolListRoutes } from '../http/tool-routes.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { directoryCalls } from '../contract/object-calls.ts';
import {
  callServer,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  type DurableObjectState,
  type Env,
} from './bindings.ts';
import { WorkspaceHookForwarder } from './hook-forwarding.ts';
import { KeyClient } from './key-client.ts';
import { KeyListing } from './key-listing.ts';
import { objectRequestCounter } from './object-requests.ts';
import { readSetting } from '../contract/settings.ts';

export class DirectoryObject {
  private readonly ready: Promise<void>;
  private app: Hono<AppEnv> | undefined;
  private failure: string | undefined;
  private readonly countRequest: () => void;

  constructor(
    private readonly state: DurableObjectState,
    private readonly env: Env,
  ) {
    this.countRequest = objectRequestCounter(state.storage, env);
    this.ready = state.blockConcurrencyWhile(() =>
      this.build().catch((error: unknown) => {
        this.failure = `toolgate could not start: ${error instanceof Error ? error.message : String(error)}`;
      }),
    );
  }

  async fetch(request: Request): Promise<Response> {
    this.countRequest();
    await this.ready;
    if (!this.app)
      return Response.json(
        { error: { code: 'unavailable', message: this.failure ?? 'toolgate is not configured.' } },
        { status: 503 },
      );
    return this.app.fetch(request);
  }

  private async build(): Promise<void> {
    const secret = readSetting(this.env, 'TOOLGATE_API_KEY', 'cloudflare');
    if (!secret) {
      this.failure =
        'TOOLGATE_API_KEY is not set; set it with `wrangler secret put TOOLGATE_API_KEY` (or --var locally) and retry.';
      return;
    }
    const settings = readSettings(this.env);
    const db = new DurableObjectSqlDatabase(this.state.storage);
    const keys = new KeyClient(this.env);
    const index = new WorkspaceIndex(db);
    const tools = new ToolRegistry(builtinTools);
    const limits = appLimitsOf(settings);

    const app = createBaseApp({ keys, tools, runnerProtocol: true, sandbox: settings.sandbox });
    app.route('/v1', keyRoutes({ keys: new KeyListing(this.env, db, keys), tools, limits }));
    app.route('/v1', toolListRoutes({ tools }));
    // Hooks live here, since a delivery's URL does not name its workspace; a verified one runs in its workspace's object.
    app.route(
      '/v1',
      hookRoutes({
        hooks: new HookStore(db),
        deliverer: new WorkspaceHookForwarder(this.env),
        limits,
        checkpoints: true,
      }),
    );

    // The other objects' calls: each a JSON body in, a JSON answer out.
    const internal = new Hono<AppEnv>();
    internal.use('*', internalOnly());
    const serve = callServer(internal, settings.maxBodyBytes);
    serve(directoryCalls.register, ({ workspace }) => index.add(workspace));
    serve(directoryCalls.workspaces, () => ({ names: index.names() }));
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);
    assertRoutesGuarded(app);
    this.app = app;
  }
}

/**
 * Every workspace object that ever served a request: the ones a listing whose scope is every
 * workspace (`*`) asks. A name stays once added (its object keeps usage records after the
 * workspace is deleted).
 */
class WorkspaceIndex {
  constructor(private readonly db: SqlDatabase) {
    db.script('CREATE TABLE IF NOT EXISTS workspace_objects (name TEXT PRIMARY KEY)');
  }

  add(name: string): void {
    this.db.query('INSERT INTO workspace_objects (name) VALUES (?) ON CONFLICT (name) DO NOTHING', name);
  }

  names(): string[] {
    return this.db.query<{ name: string }>('SELECT name FROM workspace_objects ORDER BY name').map((row) => row.name);
  }
}

// The Cloudflare home's directory: one Durable Object for what names no workspace and no tool call
// needs (the key listing, webhooks, the index of workspace objects), answering the routes that span
// workspaces (keys, usage, approval listings) by asking the objects that hold them.
import { Hono } from 'hono';
import { maySee } from '../approvals/approval-flow.ts';
import type { Approval } from '../approvals/approval-store.ts';
import { ToolError } from '../core/errors.ts';
import { scopeCovers } from '../core/workspace-scope.ts';
import { HookStore } from '../hooks/hook-store.ts';
import type { AppEnv } from '../http/app-deps.ts';
import { createBaseApp } from '../http/app.ts';
import { approvalRoutes, type ApprovalDesk } from '../http/approval-routes.ts';
import { hookRoutes } from '../http/hook-routes.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import { keyRoutes } from '../http/key-routes.ts';
import { toolListRoutes } from '../http/tool-routes.ts';
import { usageRoutes } from '../http/usage-routes.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import type { UsageQuery, UsageRow } from '../metering/usage-meter.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import {
  directoryCalls,
  workspaceCalls,
  type ObjectCall,
  type ObjectCallAnswer,
  type ObjectCallBody,
} from '../contract/object-calls.ts';
import {
  callObject,
  callServer,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  workspaceObject,
  type DurableObjectState,
  type Env,
} from './bindings.ts';
import { WorkspaceHookForwarder } from './hook-forwarding.ts';
import { KeyClient } from './key-client.ts';
import { KeyListing } from './key-listing.ts';
import { objectRequestCounter } from './object-requests.ts';
import { readSetting } from '../contract/settings.ts';

/** Workspace objects asked at once when a listing spans them. */
const FAN_OUT = 16;

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
    const limits = {
      maxBodyBytes: settings.maxBodyBytes,
      maxFileBytes: settings.maxFileBytes,
      defaultReadMaxChars: settings.defaultReadMaxChars,
      edgeMemoryBytes: settings.edgeMemoryBytes,
    };
    const spanning = new SpanningViews(this.env, index, keys);

    const app = createBaseApp({ keys, tools, runnerProtocol: true, sandbox: settings.sandbox });
    app.route('/v1', keyRoutes({ keys: new KeyListing(this.env, db, keys), tools, limits }));
    app.route('/v1', toolListRoutes({ tools }));
    app.route('/v1', usageRoutes({ usage: spanning }));
    app.route('/v1', approvalRoutes({ approvals: spanning, limits, keepAliveMs: settings.streamKeepAliveMs }));
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
    serve(directoryCalls.approvalChanged, ({ approval }) => spanning.approvalChanged(approval));
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);
    assertRoutesGuarded(app);
    this.app = app;
  }
}

/**
 * Every workspace object that ever served a request: the ones a listing that spans workspaces
 * asks. A name stays once added (its object keeps usage records after the workspace is deleted).
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

/** Usage totals and approval listings over every workspace object, as one object would answer them. */
class SpanningViews implements ApprovalDesk {
  /** The open approvals streams of this object: each hears of every approval its key may see. */
  private readonly watchers = new Set<{ key: ApiKey; listener: (approval: Approval) => void }>();

  constructor(
    private readonly env: Env,
    private readonly index: WorkspaceIndex,
    private readonly keys: KeyClient,
  ) {}

  async summary(query: UsageQuery): Promise<UsageRow[]> {
    const names = this.index
      .names()
      .filter((name) => query.workspaces === undefined || scopeCovers(query.workspaces, name));
    const parts = await this.ask(names, workspaceCalls.usage, query);
    const totals = new Map<string, UsageRow>();
    for (const row of parts.flat()) {
      const total = totals.get(row.group);
      if (!total) {
        totals.set(row.group, { ...row });
        continue;
      }
      total.calls += row.calls;
      total.errors += row.errors;
      total.bytesIn += row.bytesIn;
      total.bytesOut += row.bytesOut;
      total.processSeconds = Math.round((total.processSeconds + row.processSeconds) * 1000) / 1000;
    }
    return [...totals.values()].sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
  }

  async listApprovals(key: ApiKey, status: Approval['status'] | undefined, limit: number): Promise<Approval[]> {
    const visible = this.index.names().filter((name) => canSeeWorkspace(key, name));
    const parts = await this.ask(visible, workspaceCalls.approvals, { key, status, limit });
    // Newest first, as one object lists them.
    return parts
      .flat()
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
      .slice(0, limit);
  }

  watchApprovals(key: ApiKey, listener: (approval: Approval) => void): () => void {
    const entry = { key, listener };
    this.watchers.add(entry);
    return () => {
      this.watchers.delete(entry);
    };
  }

  async keyLive(key: ApiKey): Promise<boolean> {
    return (await this.keys.get(key.id)) !== undefined;
  }

  /** A workspace object's approval was created or changed: each stream whose key may see it is told. */
  approvalChanged(approval: Approval): void {
    for (const { key, listener } of [...this.watchers]) if (maySee(key, approval)) listener(approval);
  }

  /** Approval ids name their workspace; the Worker sends those to it, so what reaches here names none. */
  getApproval(_key: ApiKey, id: string): Approval {
    throw new ToolError('not_found', `Approval ${id} does not exist.`, { approvalId: id });
  }

  async decide(key: ApiKey, id: string): Promise<Approval> {
    return this.getApproval(key, id);
  }

  /** Asks each named workspace object, a batch at a time; every one of these calls has an answer. */
  private async ask<Call extends ObjectCall>(
    names: string[],
    call: Call,
    body: ObjectCallBody<Call>,
  ): Promise<NonNullable<ObjectCallAnswer<Call>>[]> {
    const answers: NonNullable<ObjectCallAnswer<Call>>[] = [];
    for (let start = 0; start < names.length; start += FAN_OUT) {
      const batch = names.slice(start, start + FAN_OUT);
      answers.push(
        ...(await Promise.all(
          batch.map(async (name) => (await callObject(workspaceObject(this.env, name), call, body))!),
        )),
      );
    }
    return answers;
  }
}

// The Cloudflare home's workspace object: one Durable Object per workspace holding its manifest,
// processes, logs, approvals and the usage records of calls on it (each written in the
// transaction of the call's effect), serving the workspace's routes with the core's own code.
import { Hono } from 'hono';
import { ApprovalStore } from '../approvals/approval-store.ts';
import { ToolCalls } from '../calls/tool-calls.ts';
import { DeliveryRecords } from '../hooks/delivery-records.ts';
import { HookDeliveries } from '../hooks/hook-deliveries.ts';
import { appLimitsOf, type AppEnv } from '../http/app-deps.ts';
import { createBaseApp } from '../http/app.ts';
import { approvalRoutes } from '../http/approval-routes.ts';
import { archiveRoutes } from '../http/archive-routes.ts';
import { historyRoutes } from '../http/history-routes.ts';
import { mcpRoutes } from '../http/mcp-routes.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import { leasedJobBody, runnerRoutes } from '../http/runner-routes.ts';
import { logStreamRoutes } from '../http/log-stream-routes.ts';
import { toolRoutes } from '../http/tool-routes.ts';
import { workspaceRoutes } from '../http/workspace-routes.ts';
import { UsageMeter } from '../metering/usage-meter.ts';
import { ProcessStore } from '../processes/process-store.ts';
import { WorkspaceHistory } from '../history/workspace-history.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import { R2ObjectStore } from '../storage/r2-object-store.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { Workspaces } from '../workspace/workspaces.ts';
import { directoryCalls, workspaceCalls } from '../contract/object-calls.ts';
import {
  callObject,
  callServer,
  directoryObject,
  INTERNAL_PREFIX,
  internalOnly,
  readSettings,
  type DurableObjectState,
  type Env,
} from './bindings.ts';
import { workerEgressFetch } from './egress-fetch.ts';
import { HOOK_DELIVERY_PATH, receiveHookDelivery } from './hook-delivery-route.ts';
import { storeFamilies } from './store-family-object.ts';
import { forkAcrossObjects, serveForkCalls } from './workspace-fork.ts';
import { ApprovalRelay } from './approval-relay.ts';
import { KeyClient } from './key-client.ts';
import { objectRequestCounter } from './object-requests.ts';
import { JobDispatch } from './job-dispatch.ts';
import { consoleLog as log } from '../core/log.ts';

/** The header the Worker names the workspace in, so the object knows its name and can enter it in the directory's index. */
export const WORKSPACE_HEADER = 'x-toolgate-workspace';
/** Jobs of vanished runners are swept this often while any job is queued or running. */
const SWEEP_MS = 5_000;
/** A Durable Object has 128 MB of memory: the blob cache keeps a small share of it. */
const BLOB_CACHE_BYTES = 16 * 1024 * 1024;
/** And remembered search walks hold at most this many files (some 15 MB). */
const VIEW_ENTRIES = 100_000;

export class WorkspaceObject {
  private readonly ready: Promise<void>;
  private app: Hono<AppEnv> | undefined;
  private processes: ProcessStore | undefined;
  private calls: ToolCalls | undefined;
  private approvals: ApprovalStore | undefined;
  private dispatch: JobDispatch | undefined;
  private workspaces: Workspaces | undefined;
  private registered = new Set<string>();
  private keys: KeyClient | undefined;
  /** When this object next sweeps its store for unreferenced contents (see noteSweep). */
  private nextSweepAt: number | undefined;
  private blobGc = { graceMs: 0, intervalMs: 0 };
  private failure: string | undefined;
  private readonly countRequest: () => void;

  constructor(
    private readonly state: DurableObjectState,
    private readonly env: Env,
  ) {
    this.countRequest = objectRequestCounter(state.storage, env);
    this.ready = state.blockConcurrencyWhile(() =>
      Promise.resolve()
        .then(() => this.build())
        .catch((error: unknown) => {
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
    // The keys' objects tell this object, by its name, when a key it holds a copy of changes.
    const name = request.headers.get(WORKSPACE_HEADER);
    if (name !== null && this.keys) this.keys.watcher ??= name;
    const response = await this.app.fetch(request);
    await this.register(request.headers.get(WORKSPACE_HEADER)).catch((error: unknown) =>
      log('could not enter the workspace in the directory; the next request retries', error),
    );
    await this.dispatch!.send();
    this.noteSweep();
    await this.scheduleAlarm();
    return response;
  }

  /** Marks jobs of vanished runners lost, expires approvals, sends jobs the Queue has not taken; repeats while jobs are active. */
  async alarm(): Promise<void> {
    await this.ready;
    this.processes?.sweep();
    // While processes run the alarm comes every few seconds: their seconds count against quotas as they accrue.
    await this.calls?.processTime?.accrue();
    this.calls?.expire();
    await this.dispatch?.send();
    this.noteSweep();
    await this.sweepIfDue();
    await this.scheduleAlarm();
  }

  /** Plans a sweep of this object's store an interval from now, when one could delete anything. */
  private noteSweep(): void {
    if (this.nextSweepAt === undefined && this.workspaces?.sweepDue())
      this.nextSweepAt = Date.now() + this.blobGc.intervalMs;
  }

  private async sweepIfDue(): Promise<void> {
    if (this.nextSweepAt === undefined || this.nextSweepAt > Date.now() || !this.workspaces) return;
    this.nextSweepAt = undefined;
    try {
      await this.workspaces.sweepBlobs(this.blobGc.graceMs);
    } catch (error) {
      log('could not sweep unreferenced file contents; the next sweep tries again', error);
    }
    this.noteSweep();
  }

  private build(): void {
    const env = this.env;
    const settings = readSettings(env);
    const db = new DurableObjectSqlDatabase(this.state.storage);
    const objects = new R2ObjectStore(env.BLOBS);
    const workspaces = new Workspaces(db, objects, {
      blobCacheBytes: BLOB_CACHE_BYTES,
      viewEntries: VIEW_ENTRIES,
      families: storeFamilies(env),
    });
    this.blobGc = settings.blobGc;
    const egress = workerEgressFetch(settings.egressAllowHosts);
    const history = new WorkspaceHistory(db, objects, {
      limits: { ...settings.importLimits, maxFileBytes: settings.maxFileBytes },
      egress,
      log,
    }).attach(workspaces);
    const processes = new ProcessStore(db, {
      leaseMs: settings.leaseMs,
      maxOutputChars: settings.maxProcessOutputChars,
      maxRunningPerWorkspace: settings.workspaceMaxProcesses,
      log,
    });
    const tools = new ToolRegistry(builtinTools);
    const limits = appLimitsOf(settings);
    const keys = new KeyClient(env);
    const meter = new UsageMeter(db, Date.now, log);
    // An approval's id names its workspace, so the Worker can send a decision straight to this object.
    const approvals = new ApprovalStore(
      db,
      Date.now,
      (workspace) => `apr_${crypto.randomUUID().replaceAll('-', '')}.${workspace}`,
    );
    const calls = new ToolCalls({
      tools,
      workspaces,
      keys,
      approvals,
      meter,
      rateLimiter: keys,
      quotaLedger: keys,
      admission: keys,
      limits,
      processes,
      approvalTtlMs: settings.approvalTtlMs,
      processAccrualMs: settings.processAccrualMs,
      defaultRateLimitPerMinute: settings.rateLimitPerMinute,
      afterCall: history.afterCall,
      egress,
      log,
    });
    calls.start();
    // The approvals streams are served by the keys' objects: those that asked hear of each change here.
    const relay = new ApprovalRelay(db, env);
    calls.onApprovalChange((approval) => relay.changed(approval));
    const forkWorkspace = forkAcrossObjects(env, workspaces, history, settings.maxBodyBytes);
    const deps = { workspaces, keys, tools, calls, meter, limits, processes, forkWorkspace };

    const app = createBaseApp(deps);
    app.route('/v1', workspaceRoutes(deps));
    app.route('/v1', archiveRoutes(deps));
    app.route('/v1', toolRoutes(deps));
    app.route('/v1', approvalRoutes({ approvals: calls, limits, keepAliveMs: settings.streamKeepAliveMs }));
    app.route('/v1', mcpRoutes(deps));
    app.route('/v1', historyRoutes({ ...deps, history }));
    app.route('/v1', runnerRoutes(deps));
    app.route('/v1', logStreamRoutes({ ...deps, keepAliveMs: settings.streamKeepAliveMs }));

    const internal = new Hono<AppEnv>();
    internal.use('*', internalOnly());
    const serve = callServer(internal, settings.maxBodyBytes);
    serve(workspaceCalls.keyChanged, ({ id }) => keys.forget(id));
    serve(workspaceCalls.watchApprovals, ({ watcher, ms }) => relay.watch(watcher, ms));
    serve(workspaceCalls.usage, (query) => meter.summary(query));
    serve(workspaceCalls.approvals, ({ key, status, limit }) => calls.listApprovals(key, status, limit));
    serve(workspaceCalls.jobWaits, ({ jobId }) => ({
      waits: processes.queuedJobs().some((job) => job.id === jobId),
    }));
    serve(workspaceCalls.leaseJob, ({ jobId, runnerId, holder, wish, shard }) => {
      const job = processes.leaseJob(jobId, runnerId, holder, wish);
      if (typeof job === 'object') this.dispatch!.shard = shard;
      if (job === 'gone') return undefined;
      if (job === 'later') {
        // Held back: once a slot frees, this object's jobs are offered again so a waiting runner hears of them.
        this.dispatch!.heldBack = true;
        return { later: true };
      }
      return { job: leasedJobBody(job, deps) };
    });
    serveForkCalls(serve, workspaces, history, (workspace) => this.register(workspace));
    // A family sweep of a store this object shares with forks in others (workspace/family-sweep.ts).
    serve(workspaceCalls.sharedStoreCheck, ({ store, uid, round, hashes, doom }) =>
      workspaces.sharedStores.check(store, uid, round, hashes, doom),
    );
    serve(workspaceCalls.sharedStoreRelease, ({ store, hashes }) => workspaces.sharedStores.release(store, hashes));
    // Webhook deliveries the directory verified: run here, as the hook's owner key, once per delivery id.
    const hookDeliveries = new HookDeliveries({
      calls,
      keys,
      records: new DeliveryRecords(db),
      workspaces,
      history,
      log,
    });
    internal.post(`/${HOOK_DELIVERY_PATH}`, (c) =>
      receiveHookDelivery(hookDeliveries, c.req.raw, settings.maxBodyBytes),
    );
    app.route(INTERNAL_PREFIX.slice(0, -1), internal);

    assertRoutesGuarded(app);
    this.app = app;
    this.workspaces = workspaces;
    this.keys = keys;
    this.processes = processes;
    this.calls = calls;
    this.approvals = approvals;
    const dispatch = new JobDispatch(db, processes, env);
    // At once, not after the answer: an exec's answer waits for the job it queued.
    processes.onQueued(() => void dispatch.send());
    processes.onChange((id) => {
      if (dispatch.heldBack && processes.record(id)?.endedAt) void dispatch.reoffer();
    });
    this.dispatch = dispatch;
  }

  /**
   * Enters the workspace in the directory's index once it exists (an authorised PUT created it),
   * so listings that span workspaces ask this object; a name merely asked about never enters.
   * Checked after every request, so an entry that failed once is made by the next one.
   */
  private async register(workspace: string | null): Promise<void> {
    if (workspace === null || this.registered.has(workspace) || this.workspaces?.info(workspace) === undefined) return;
    await callObject(directoryObject(this.env), directoryCalls.register, { workspace });
    this.registered.add(workspace);
  }

  /** An alarm for the next sweep while jobs are active, for the next approval to expire, or for the next blob sweep. */
  private async scheduleAlarm(): Promise<void> {
    const sweepAt = this.processes?.hasActiveJobs() ? Date.now() + SWEEP_MS : Infinity;
    const at = Math.min(sweepAt, this.approvals?.nextExpiry() ?? Infinity, this.nextSweepAt ?? Infinity);
    if (at === Infinity) return;
    const current = await this.state.storage.getAlarm();
    if (current === null || current > at) await this.state.storage.setAlarm(at);
  }
}

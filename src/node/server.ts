// Builds the Node home from its configuration: SQLite, an fs or S3 object store, the HTTP app.
import { hash } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import { appLimitsOf, type AppEnv } from '../http/app-deps.ts';
import { createApp } from '../http/app.ts';
import { localDeliverer } from '../http/hook-routes.ts';
import { DeliveryRecords } from '../hooks/delivery-records.ts';
import { HookDeliveries } from '../hooks/hook-deliveries.ts';
import { HookStore } from '../hooks/hook-store.ts';
import { createCallServices } from '../calls/call-services.ts';
import { FsObjectStore } from '../storage/node/fs-object-store.ts';
import { makePrivateDir } from '../storage/node/private-files.ts';
import { SqliteDatabase } from '../storage/node/sqlite-database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { ProcessStore } from '../processes/process-store.ts';
import { WorkspaceHistory } from '../history/workspace-history.ts';
import { nodeEgressFetch } from './egress-fetch.ts';
import { readNodeBody } from './request-body.ts';
import { sendNodeBody } from './response-body.ts';
import { Runner } from '../runner/node/runner.ts';
import { inProcessTransport } from '../runner/runner-client.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { Workspaces } from '../workspace/workspaces.ts';
import { generateSecret } from '../keys/key-store.ts';
import { loadAdminSecret, type AdminSecret } from './admin-key.ts';
import type { NodeConfig } from './config.ts';
import type { EdgeEngine } from '../tools/edge-bash/edge-interpreter.ts';
import type { EdgeThreadPool } from './edge-threads.ts';
import { SearchThreadPool } from './search-threads.ts';
import { consoleLog, type Log } from '../core/log.ts';
import { readSetting } from '../contract/settings.ts';
import { startBlobSweeps } from './blob-sweep-timer.ts';

export interface NodeHome {
  app: Hono<AppEnv>;
  workspaces: Workspaces;
  processes: ProcessStore;
  blobs: 'fs' | 's3';
  /** Resolves once the blob store has no work left after its answers (the fs store's journals moved to their files). */
  blobsSettled(): Promise<void>;
  adminKey: AdminSecret;
  /** The secret of the in-process runner's key, when the server runs one. */
  runnerKey: string | undefined;
  close(): void;
}

export interface RunningServer extends Omit<NodeHome, 'close'> {
  url: string;
  runner: Runner | undefined;
  close(): Promise<void>;
}

/** The services and the app of the Node home, not yet listening. */
export async function createNodeHome(config: NodeConfig): Promise<NodeHome> {
  // The data dir holds the database, the admin key and tenants' blobs: its owner's alone.
  makePrivateDir(config.dataDir);
  // What no caller sees (background failures, internal errors) goes to one log.
  const log = consoleLog;
  const db = SqliteDatabase.open(join(config.dataDir, 'toolgate.db'));
  // The S3 SDK loads only when a bucket is set: it costs about 0.3 s of CPU at every start otherwise.
  const s3 =
    readSetting(config.env, 'TOOLGATE_S3_BUCKET', 'node') === undefined
      ? undefined
      : (await import('../storage/s3-object-store.ts')).s3ObjectStoreFromEnv(config.env);
  if (!s3) makePrivateDir(join(config.dataDir, 'blobs'));
  // A blob journal left by a crash is moved to its files before anything is served.
  const fsObjects = s3
    ? undefined
    : await FsObjectStore.open(join(config.dataDir, 'blobs'), {
        journalMoveDelayMs: config.blobJournalMoveDelayMs,
        log,
      });
  const objects: ObjectStore = s3 ?? fsObjects!;
  // Node's SHA-256 answers at once; WebCrypto's would take a trip through the thread pool per file.
  const workspaces = new Workspaces(db, objects, {
    readOnlyRoots: config.readOnlyRoots,
    hashContent: (bytes) => hash('sha256', bytes, 'hex'),
  });
  const processes = new ProcessStore(db, {
    leaseMs: config.leaseMs,
    maxOutputChars: config.maxProcessOutputChars,
    maxRunningPerWorkspace: config.workspaceMaxProcesses,
    log,
  });
  const tools = new ToolRegistry(builtinTools);
  const limits = appLimitsOf(config);
  // Imports and approval notices reach only hosts the egress rule allows, checked on the address connected to.
  const egress = nodeEgressFetch(config.egressAllowHosts);
  const history = new WorkspaceHistory(db, objects, {
    limits: { ...config.importLimits, maxFileBytes: config.maxFileBytes },
    egress,
    log,
  }).attach(workspaces);
  // grep searches a file with a very long line on a thread, off the event loop all tenants share.
  const searchThreads = new SearchThreadPool({ log });
  // bash's edge engine runs scripts on threads too: a script is JavaScript work of any length.
  const edgeEngine = lazyEdgeEngine(config.edgeThreads, log);
  const services = createCallServices({
    db,
    tools,
    workspaces,
    limits,
    processes,
    searchThreads,
    edgeEngine,
    approvalTtlMs: config.approvalTtlMs,
    processAccrualMs: config.processAccrualMs,
    rateLimitPerMinute: config.rateLimitPerMinute,
    afterCall: history.afterCall,
    egress,
    log,
  });
  const adminKey = loadAdminSecret(config.dataDir, config.apiKey);
  await services.keys.ensureBootstrapAdmin(adminKey.secret);
  // The in-process runner serves the runner protocol with a runner key of its own, new at every
  // start and known only to this process (admin keys do not serve that protocol).
  const runnerKey = config.inProcessRunner ? generateSecret() : undefined;
  await services.keys.ensureBootstrapRunner(runnerKey);
  // Deliveries run as their hook's owner key through the same calls as the tool routes.
  const hookDeliveries = new HookDeliveries({
    calls: services.calls,
    keys: services.keys,
    records: new DeliveryRecords(db),
    workspaces,
    history,
    log,
  });
  const hooks = { hooks: new HookStore(db), deliverer: localDeliverer(hookDeliveries), checkpoints: true };
  const app = createApp({
    workspaces,
    processes,
    tools,
    limits,
    ...services,
    hooks,
    history,
    sandbox: config.sandbox.mode,
    streamKeepAliveMs: config.streamKeepAliveMs,
    readBody: readNodeBody,
    sendBody: sendNodeBody,
  });
  // Jobs whose runner stopped renewing its lease become lost within the lease plus one sweep interval.
  const sweeper = setInterval(() => processes.sweep(), Math.min(processes.sweepIntervalMs, 5_000));
  sweeper.unref();
  const blobSweeps = startBlobSweeps(workspaces, config.blobGc, log);
  return {
    app,
    workspaces,
    processes,
    blobs: s3 ? 's3' : 'fs',
    blobsSettled: async () => fsObjects?.settled(),
    adminKey,
    runnerKey,
    close: () => {
      clearInterval(sweeper);
      blobSweeps.stop();
      void searchThreads.close();
      void edgeEngine.close();
      services.calls.stop();
      db.close();
    },
  };
}

export async function startNodeServer(config: NodeConfig, home?: NodeHome): Promise<RunningServer> {
  const built = home ?? (await createNodeHome(config));
  const server = await listen(built.app.fetch, config);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const runner =
    built.runnerKey !== undefined
      ? new Runner({
          url,
          key: built.runnerKey,
          dataDir: join(config.dataDir, 'runner'),
          network: config.runnerNetwork,
          overlay: config.runnerOverlay,
          sandbox: config.sandbox,
          // In this process, the runner's requests go straight to the app: no socket, no HTTP parse.
          transport: inProcessTransport(built.app.fetch),
        })
      : undefined;
  runner?.start();
  return {
    ...built,
    url,
    runner,
    async close() {
      await runner?.stop();
      (server as HttpServer).closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      built.close();
    },
  };
}

function listen(fetch: (request: Request) => Response | Promise<Response>, config: NodeConfig): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port: config.port, hostname: config.host }, () => resolve(server));
    server.once('error', reject);
  });
}

/**
 * The edge engine's threads, their module loaded on the first command that may run on the edge,
 * so that start-up does not wait for it (engine "runner" never loads it).
 */
function lazyEdgeEngine(size: number, log: Log): EdgeEngine & { close(): Promise<void> } {
  let pool: Promise<EdgeThreadPool> | undefined;
  const threads = () =>
    (pool ??= import('./edge-threads.ts').then(({ EdgeThreadPool }) => new EdgeThreadPool({ size, log })));
  return {
    interpret: async (source, run) => (await threads()).interpret(source, run),
    close: async () => {
      if (pool !== undefined) await (await pool).close();
    },
  };
}

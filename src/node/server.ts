// Builds the Node home from its configuration: SQLite, an fs or S3 object store, the HTTP app.
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import { createApp, type AppEnv } from '../http/app.ts';
import { KeyStore } from '../keys/key-store.ts';
import { FsObjectStore } from '../storage/node/fs-object-store.ts';
import { SqliteDatabase } from '../storage/node/sqlite-database.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { s3ObjectStoreFromEnv } from '../storage/s3-object-store.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { Workspaces } from '../workspace/workspaces.ts';
import { loadAdminSecret, type AdminSecret } from './admin-key.ts';
import type { NodeConfig } from './config.ts';

export interface NodeHome {
  app: Hono<AppEnv>;
  workspaces: Workspaces;
  blobs: 'fs' | 's3';
  adminKey: AdminSecret;
  close(): void;
}

export interface RunningServer extends Omit<NodeHome, 'close'> {
  url: string;
  close(): Promise<void>;
}

/** The services and the app of the Node home, not yet listening. */
export async function createNodeHome(config: NodeConfig): Promise<NodeHome> {
  const db = SqliteDatabase.open(join(config.dataDir, 'toolgate.db'));
  const s3 = s3ObjectStoreFromEnv(config.env);
  const objects: ObjectStore = s3 ?? new FsObjectStore(join(config.dataDir, 'blobs'));
  const keys = new KeyStore(db);
  const adminKey = loadAdminSecret(config.dataDir, config.apiKey);
  await keys.ensureBootstrapAdmin(adminKey.secret);
  const workspaces = new Workspaces(db, objects, config.readOnlyRoots);
  const app = createApp({
    workspaces,
    keys,
    tools: new ToolRegistry(builtinTools),
    limits: { maxBodyBytes: config.maxBodyBytes, maxFileBytes: config.maxFileBytes, defaultReadMaxChars: config.defaultReadMaxChars },
  });
  return { app, workspaces, blobs: s3 ? 's3' : 'fs', adminKey, close: () => db.close() };
}

export async function startNodeServer(config: NodeConfig, home?: NodeHome): Promise<RunningServer> {
  const built = home ?? (await createNodeHome(config));
  const server = await listen(built.app.fetch, config);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    ...built,
    url: `http://${host}:${address.port}`,
    async close() {
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

// The HTTP app in-process on real drivers (SQLite in memory, the memory object store), for tests
// that must set up what the API cannot yet create (symlinks, non-UTF-8 files).
import { createApp } from '../../src/http/app.ts';
import { createCallServices } from '../../src/calls/call-services.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import { builtinTools } from '../../src/tools/index.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { Workspaces, type ReadOnlyRoot } from '../../src/workspace/workspaces.ts';
import { TEST_KEY, type ApiAnswer } from './server-process.ts';

export async function inProcessApp(readOnlyRoots: ReadOnlyRoot[] = []) {
  const db = SqliteDatabase.memory();
  const objects = new MemoryObjectStore();
  const workspaces = new Workspaces(db, objects, { readOnlyRoots });
  const tools = new ToolRegistry(builtinTools);
  const limits = {
    maxBodyBytes: 1024 * 1024,
    maxFileBytes: 1024 * 1024,
    defaultReadMaxChars: 20_000,
    edgeMemoryBytes: 256 * 1024 * 1024,
  };
  const services = createCallServices({ db, tools, workspaces, limits });
  await services.keys.ensureBootstrapAdmin(TEST_KEY);
  const app = createApp({ workspaces, tools, limits, ...services });
  const call = async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const init: RequestInit = {
      method,
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await app.request(path, init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };
  return { db, objects, workspaces, app, call };
}

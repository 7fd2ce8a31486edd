// Starts the real server process exactly as `npm start` does, on a free port, for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { ToolgateClient } from '../../src/client/index.ts';
import { runningServers } from './running-servers.ts';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const TEST_KEY = 'tg_test_admin_key_0123456789abcdef';

export interface ServerProcess {
  url: string;
  key: string;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
  /** The typed client (toolgate/client) with the admin key, so the tests exercise it too. */
  client: ToolgateClient;
  /** Calls the API with the admin key; JSON bodies are encoded, answers decoded. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  key?: string;
}

/**
 * The home the HTTP tests run against: `node` (npm start) by default, `worker` (npm run
 * start:worker: wrangler dev with a runner attached) when TOOLGATE_TEST_HOME=worker.
 */
export const testHome: 'node' | 'worker' = process.env.TOOLGATE_TEST_HOME === 'worker' ? 'worker' : 'node';

export function makeDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'toolgate-test-'));
}

/**
 * How the server is run: the pass's bundle of it when its set-up made one (test/support/server-bundle.ts),
 * else its source through tsx.
 */
function serverArguments(): string[] {
  const bundles = process.env.TOOLGATE_TEST_SERVERS;
  const name = testHome === 'worker' ? 'start-worker' : 'node';
  return bundles ? [join(bundles, `${name}.js`)] : ['--import', 'tsx', `functions/${name}.ts`];
}

export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? makeDataDir();
  const key = options.key ?? TEST_KEY;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    PORT: '0',
    TOOLGATE_DATA: dataDir,
    TOOLGATE_API_KEY: key,
    // The worker-home passes build the Worker once for all their servers (test/support/worker-script.ts).
    ...(process.env.TOOLGATE_WORKER_SCRIPT ? { TOOLGATE_WORKER_SCRIPT: process.env.TOOLGATE_WORKER_SCRIPT } : {}),
    ...options.env,
  };
  const child = spawn(process.execPath, serverArguments(), {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${output}`)),
      testHome === 'worker' ? 90_000 : 30_000,
    );
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ServerProcess = {
    url,
    key,
    dataDir,
    child,
    output: () => output,
    client: new ToolgateClient({ url, key }),
    call: (method, path, body, headers) => callApi(url, key, method, path, body, headers),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
  runningServers.add(server);
  void exited.then(() => runningServers.delete(server));
  return server;
}

/**
 * How long a request that may be sent again waits for its answer's headers on the worker home.
 * wrangler dev 4.86's proxy (the last release for Node 20) sometimes writes a request to its pooled
 * connection to the Worker just as that connection's 5 s keep-alive ends: the Worker never sees
 * the request and the client waits for ever (cloudflare/workers-sdk#15252 and #15317; seen here
 * under load, the Worker's first line never logged and workerd idle). Every call of the contract
 * but POST may be sent again; a POST is left to the test's own timeout.
 */
const LOST_REQUEST_MS = 20_000;

async function send(target: string, init: RequestInit): Promise<Response> {
  if (testHome !== 'worker' || init.method === 'POST' || init.method === 'PATCH') return fetch(target, init);
  for (let attempt = 1; ; attempt += 1) {
    const lost = new AbortController();
    const timer = setTimeout(() => lost.abort(), LOST_REQUEST_MS);
    try {
      return await fetch(target, { ...init, signal: lost.signal });
    } catch (error) {
      if (!lost.signal.aborted || attempt === 3) throw error;
      console.warn(`${init.method} ${target}: no answer in ${LOST_REQUEST_MS} ms from wrangler dev; sent again`);
    } finally {
      clearTimeout(timer);
    }
  }
}

export async function callApi(
  url: string,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  const init: RequestInit = { method, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const response = await send(url + path, init);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Non-JSON answers stay text so the test can show them.
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Servers a test file starts itself (some killed on purpose) and data dirs it makes: after its
 * tests, each server still running is stopped and each dir removed.
 */
export function stopAfterAll(): { servers: ServerProcess[]; dirs: string[] } {
  const started = { servers: [] as ServerProcess[], dirs: [] as string[] };
  afterAll(async () => {
    for (const server of started.servers)
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    for (const dir of started.dirs) removeDir(dir);
  });
  return started;
}

/**
 * One server for a test file: started before its tests, stopped (and its data removed) after.
 * The answer stands for the server once it has started.
 */
export function useServer(options: StartOptions = {}): ServerProcess {
  let current: ServerProcess | undefined;
  beforeAll(async () => {
    current = await startServer(options);
  });
  afterAll(async () => {
    if (!current) return;
    await current.stop();
    removeDir(current.dataDir);
  });
  const started = (): ServerProcess => {
    if (!current) throw new Error('the test server is used before it started');
    return current;
  };
  return {
    get url() {
      return started().url;
    },
    get key() {
      return started().key;
    },
    get dataDir() {
      return started().dataDir;
    },
    get child() {
      return started().child;
    },
    get client() {
      return started().client;
    },
    output: () => started().output(),
    call: (...args) => started().call(...args),
    stop: () => started().stop(),
    kill: () => started().kill(),
  };
}

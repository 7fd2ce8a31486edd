// The Cloudflare home with wrangler's dev tooling out of the way, for figures about the Worker and its objects
// rather than about `wrangler dev`: started by wrangler's API with the inspector off, and reachable both through
// wrangler's ProxyWorker and straight at the user worker's own workerd, with a runner attached.
//
// `npm run start:worker` runs `wrangler dev`, whose inspector relay enables the DevTools Network domain on the
// user worker and posts every event of it (four per subrequest, one per chunk of a streamed subrequest) to
// wrangler's Node process as its own HTTP request; the CLI has no switch for it. A deployment has no relay
// and no ProxyWorker.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { generateSecret } from '../src/keys/key-store.ts';

interface WorkerdHomeSpec {
  dataDir: string;
  key: string;
  runnerKey: string;
}

/** Where the home answers: through wrangler's ProxyWorker, and at the user worker's workerd itself. */
export interface WorkerdHomeUrls {
  proxyUrl: string;
  directUrl: string;
}

/** Starts the home in a child process (wrangler's Node side keeps its own core time) and a runner leasing from it straight. */
export async function startWorkerdHome(key: string): Promise<WorkerdHomeUrls & { stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-workerd-'));
  const spec: WorkerdHomeSpec = { dataDir, key, runnerKey: generateSecret() };
  const path = new URL(import.meta.url).pathname;
  const home = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', path, '--child', JSON.stringify(spec)], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      WRANGLER_HIDE_BANNER: 'true',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const homeExited = new Promise<void>((resolve) => home.once('exit', () => resolve()));
  const first = await createInterface({ input: home.stdout })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error('the workerd home did not start');
  const urls = JSON.parse(String(first.value)) as WorkerdHomeUrls;
  const runner = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      new URL('../functions/runner.ts', import.meta.url).pathname,
      '--url',
      urls.directUrl,
      '--data',
      join(dataDir, 'runner'),
    ],
    {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        TOOLGATE_RUNNER_KEY: spec.runnerKey,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const runnerExited = new Promise<void>((resolve) => runner.once('exit', () => resolve()));
  return {
    ...urls,
    async stop() {
      runner.kill('SIGTERM');
      await runnerExited;
      home.stdin.end();
      await homeExited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function serve(spec: WorkerdHomeSpec): Promise<void> {
  const envFile = join(spec.dataDir, 'worker.env');
  writeFileSync(
    envFile,
    `TOOLGATE_API_KEY=${JSON.stringify(spec.key)}\nTOOLGATE_RUNNER_KEY=${JSON.stringify(spec.runnerKey)}\n`,
    { mode: 0o600 },
  );
  // Loaded here, in the child: the bench's own process (which serves the Node home) never holds wrangler.
  const { unstable_DevEnv } = await import('wrangler');
  const devEnv = new unstable_DevEnv();
  // The user worker's address reaches only the ProxyWorker, in this event; wrangler prints it nowhere.
  let direct: { protocol: string; hostname: string; port: string } | undefined;
  const dispatch = devEnv.dispatch.bind(devEnv);
  devEnv.dispatch = (event) => {
    if (event.type === 'reloadComplete') direct = event.proxyData.userWorkerUrl;
    dispatch(event);
  };
  const worker = await devEnv.startWorker({
    config: new URL('../wrangler.toml', import.meta.url).pathname,
    envFiles: [envFile],
    dev: {
      inspector: false,
      persist: join(spec.dataDir, 'wrangler'),
      server: { hostname: '127.0.0.1', port: 0 },
      logLevel: 'warn',
      watch: false,
    },
  });
  await worker.ready;
  const proxy = await worker.url;
  // The ProxyWorker is ready before the user worker is; its address comes once that is up.
  for (let waited = 0; !direct; waited += 100) {
    if (waited > 120_000) throw new Error("wrangler did not tell the user worker's address");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const urls: WorkerdHomeUrls = {
    proxyUrl: proxy.origin,
    directUrl: `${direct.protocol}//${direct.hostname}:${direct.port}`,
  };
  process.stdout.write(`${JSON.stringify(urls)}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => {
    void worker.dispose().then(() => process.exit(0));
  });
}

if (process.argv[2] === '--child') {
  serve(JSON.parse(process.argv[3]!) as WorkerdHomeSpec).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

// `npm run start:worker`: the Cloudflare home served locally by `wrangler dev` (workerd with R2
// and Durable Objects emulated, state under TOOLGATE_DATA), with a runner attached, configured
// by the same variables as `npm start`.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { accessSync, constants, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { readSetting, settingsReadBy } from '../src/contract/settings.ts';
import { generateSecret } from '../src/keys/key-store.ts';
import { loadAdminSecret } from '../src/node/admin-key.ts';
import { readNodeConfig } from '../src/node/config.ts';
import { Runner } from '../src/runner/node/runner.ts';
import { makePrivateDir, writePrivateFile } from '../src/storage/node/private-files.ts';
import { isEntryPoint } from '../src/node/entry-point.ts';
import { wranglerEnv } from './wrangler-env.ts';

/**
 * wrangler, found as Node finds packages, and the checkout whose node_modules holds it: so this
 * program finds both wherever it runs from (the tests run a bundled copy, test/support/server-bundle.ts).
 */
const wranglerDir = dirname(createRequire(import.meta.url).resolve('wrangler/package.json'));
const repoRoot = resolve(wranglerDir, '..', '..');
/** Variables the Worker reads, passed on when set; its two keys are written apart, as this program chooses them. */
const WORKER_VARIABLES = settingsReadBy('cloudflare').filter(
  (name) => name !== 'TOOLGATE_API_KEY' && name !== 'TOOLGATE_RUNNER_KEY',
);

const wranglerCli = join(wranglerDir, 'bin', 'wrangler.js');

/**
 * wrangler's arguments for the script: by default it builds functions/worker.ts and builds it again
 * whenever a source changes (a change mid-request answers that request 503); a script built before
 * is served as it is, with nothing watched but its own folder.
 */
function scriptArguments(prebuilt: string | undefined): string[] {
  if (prebuilt === undefined) return [];
  const script = resolve(prebuilt);
  if (!existsSync(script))
    throw new Error(`TOOLGATE_WORKER_SCRIPT names ${script}, which does not exist (build it: npm run build:worker)`);
  return ['--config', join(repoRoot, 'wrangler.toml'), '--no-bundle', script];
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Pairs of ports tried when wrangler finds one taken (PORT=0). */
const PORT_ATTEMPTS = 5;
/** How long one ask of /healthz waits for its answer while wrangler starts. */
const HEALTH_ASK_MS = 2000;
/** How long what wrangler printed before it exited may take to arrive. */
const STDERR_GRACE_MS = 500;

export interface Wrangler {
  child: ChildProcess;
  /** Whether wrangler has said that an address it was given is in use. */
  addressInUse(): boolean;
}

/** `wrangler dev` with `options`; what it prints to stderr is passed on, and watched for a port already taken. */
function startWrangler(options: string[], cli = wranglerCli): Wrangler {
  const args = [cli, 'dev', ...options, '--show-interactive-dev-session=false', '--log-level', 'warn'];
  // setpriv (util-linux) makes wrangler get SIGTERM when this process dies, even by SIGKILL, so
  // wrangler stops workerd instead of leaving it serving.
  const command = hasSetpriv()
    ? ['/usr/bin/setpriv', '--pdeathsig', 'TERM', '--', process.execPath, ...args]
    : [process.execPath, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: repoRoot,
    env: { ...process.env, ...wranglerEnv },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  let inUse = false;
  // The last few hundred characters are enough to see the message across two chunks.
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-512);
    if (/address already in use/i.test(tail)) inUse = true;
  });
  return { child, addressInUse: () => inUse };
}

/** Waits until the Worker answers /healthz at `url` (undefined), or wrangler exits first (its exit code). */
async function untilServing(url: string, wrangler: Wrangler, closing: () => boolean): Promise<number | undefined> {
  let exitCode: number | undefined;
  const { child } = wrangler;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  }).then(() => {
    exitCode = child.exitCode ?? 1;
  });
  for (let attempt = 0; ; attempt += 1) {
    // Asked for a moment only: whatever holds a port wrangler could not bind may never answer.
    const healthy =
      exitCode === undefined &&
      (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTH_ASK_MS) }).then(
        (response) => response.ok,
        () => false,
      ));
    if (healthy) return undefined;
    if (exitCode !== undefined) {
      // Its last words may still be on their way through the pipe (which a child of its own, such
      // as workerd, may hold open for good): they are given a moment before its exit is judged.
      if (!child.stderr!.closed) await Promise.race([once(child.stderr!, 'end'), delay(STDERR_GRACE_MS)]);
      return exitCode;
    }
    if (attempt > 1200 || closing()) throw new Error(`wrangler dev did not serve on ${url}`);
    await Promise.race([exited, delay(100)]);
  }
}

function hasSetpriv(): boolean {
  try {
    accessSync('/usr/bin/setpriv', constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface WranglerStart {
  host: string;
  /** The port asked for (PORT); 0 for any free one. */
  port: number;
  /** wrangler dev's options but the address and the inspector's port. */
  options: string[];
  /** The wrangler CLI to run: wrangler's own but in tests of this start. */
  cli?: string;
  /** Whether the program is stopping (a wrangler that exits then is not started again). */
  closing: () => boolean;
  /** Told each wrangler started, so a stop meanwhile stops the one running. */
  started: (wrangler: Wrangler) => void;
}

/**
 * Starts wrangler dev until the Worker answers /healthz: its URL and the wrangler serving it, or,
 * when wrangler stopped first, its exit code. With port 0 a start that finds a port taken is tried
 * again on others: a port probed free can be taken again (by any process's outgoing connection)
 * in the seconds wrangler takes to bind it.
 */
export async function startServing(
  start: WranglerStart,
): Promise<{ url: string; wrangler: Wrangler } | { code: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = start.port === 0 ? await freePort() : start.port;
    const url = `http://${start.host}:${port}`;
    const address = ['--ip', start.host, '--port', String(port), '--inspector-port', String(await freePort())];
    const wrangler = startWrangler([...start.options, ...address], start.cli);
    start.started(wrangler);
    // The Worker answers /healthz once its Durable Object has built the app.
    const code = await untilServing(url, wrangler, start.closing);
    if (code === undefined) return { url, wrangler };
    if (start.port === 0 && wrangler.addressInUse() && attempt < PORT_ATTEMPTS && !start.closing()) {
      console.error('toolgate: a port chosen for wrangler dev was taken before it bound it; trying others');
      continue;
    }
    return { code };
  }
}

/** Starts the Cloudflare home under wrangler dev on loopback, with a runner attached; stops both on SIGTERM or SIGINT. */
export async function main(): Promise<void> {
  const config = readNodeConfig(process.env);
  const script = scriptArguments(readSetting(process.env, 'TOOLGATE_WORKER_SCRIPT', 'worker-dev'));
  // The data dir holds the admin key, the Worker's env file and wrangler's state: its owner's alone.
  makePrivateDir(config.dataDir);
  const adminKey = loadAdminSecret(config.dataDir, config.apiKey);
  // Variables reach the Worker through an env file kept in the data dir, never on a command line.
  const envFile = join(config.dataDir, 'worker.env');
  // The attached runner's key: a runner key for every workspace, new at every start.
  const runnerKey = config.inProcessRunner ? generateSecret() : undefined;
  const lines = [`TOOLGATE_API_KEY=${JSON.stringify(adminKey.secret)}`];
  if (runnerKey !== undefined) lines.push(`TOOLGATE_RUNNER_KEY=${JSON.stringify(runnerKey)}`);
  for (const name of WORKER_VARIABLES)
    if (process.env[name]) lines.push(`${name}=${JSON.stringify(process.env[name])}`);
  writePrivateFile(envFile, `${lines.join('\n')}\n`);
  // wrangler keeps the Durable Objects' databases (keys, hooks) and the R2 blobs here.
  makePrivateDir(join(config.dataDir, 'wrangler'));
  let wrangler: Wrangler | undefined;
  let runner: Runner | undefined;
  let closing = false;
  const shutdown = (code: number) => {
    if (closing) return;
    closing = true;
    void (async () => {
      await runner?.stop();
      const child = wrangler?.child;
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      process.exit(code);
    })();
  };
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(0));
  const serving = await startServing({
    host: config.host,
    port: config.port,
    options: [...script, '--persist-to', join(config.dataDir, 'wrangler'), '--env-file', envFile],
    closing: () => closing,
    started: (started) => (wrangler = started),
  });
  if ('code' in serving) {
    if (!closing) console.error(`toolgate: wrangler dev exited (${serving.code}); stopping`);
    shutdown(serving.code);
    return;
  }
  const { url } = serving;
  wrangler = serving.wrangler;
  wrangler.child.once('exit', (code) => {
    if (!closing) console.error(`toolgate: wrangler dev exited (${code}); stopping`);
    shutdown(code ?? 1);
  });
  if (runnerKey !== undefined) {
    runner = new Runner({
      url,
      key: runnerKey,
      dataDir: join(config.dataDir, 'runner'),
      network: config.runnerNetwork,
      overlay: config.runnerOverlay,
      sandbox: config.sandbox,
    });
    runner.start();
    const sandbox = runner.sandbox.describe(config.runnerOverlay);
    if (sandbox.warning) console.warn(`toolgate: WARNING: runner attached: ${sandbox.text}`);
    else console.log(`toolgate: runner attached: ${sandbox.text}`);
  }
  if (config.sandbox.mode === 'none')
    console.warn(
      'toolgate: WARNING: TOOLGATE_SANDBOX=none: bash commands run WITHOUT a sandbox (/healthz says "sandbox": "none")',
    );
  console.log(`toolgate listening on ${url} (Cloudflare home under wrangler dev, state in ${config.dataDir})`);
  if (adminKey.generated) {
    console.log(`toolgate generated the first admin key (shown once; kept in ${adminKey.file}):`);
    console.log(`  ${adminKey.secret}`);
  }
}

if (isEntryPoint(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`toolgate: could not start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}

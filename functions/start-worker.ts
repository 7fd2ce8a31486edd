// `npm run start:worker`: the Cloudflare home served locally by `wrangler dev` (workerd with R2
// and Durable Objects emulated, state under TOOLGATE_DATA), with a runner attached, configured
// by the same variables as `npm start`.
import { spawn } from 'node:child_process';
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

function hasSetpriv(): boolean {
  try {
    accessSync('/usr/bin/setpriv', constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Starts the Cloudflare home under wrangler dev on loopback, with a runner attached; stops both on SIGTERM or SIGINT. */
export async function main(): Promise<void> {
  const config = readNodeConfig(process.env);
  const script = scriptArguments(readSetting(process.env, 'TOOLGATE_WORKER_SCRIPT', 'worker-dev'));
  // The data dir holds the admin key, the Worker's env file and wrangler's state: its owner's alone.
  makePrivateDir(config.dataDir);
  const adminKey = loadAdminSecret(config.dataDir, config.apiKey);
  const port = config.port === 0 ? await freePort() : config.port;
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
  const args = [
    wranglerCli,
    'dev',
    ...script,
    '--ip',
    config.host,
    '--port',
    String(port),
    '--inspector-port',
    String(await freePort()),
    '--persist-to',
    join(config.dataDir, 'wrangler'),
    '--env-file',
    envFile,
    '--show-interactive-dev-session=false',
    '--log-level',
    'warn',
  ];
  // setpriv (util-linux) makes wrangler get SIGTERM when this process dies, even by SIGKILL, so
  // wrangler stops workerd instead of leaving it serving.
  const command = hasSetpriv()
    ? ['/usr/bin/setpriv', '--pdeathsig', 'TERM', '--', process.execPath, ...args]
    : [process.execPath, ...args];
  const wrangler = spawn(command[0]!, command.slice(1), {
    cwd: repoRoot,
    env: { ...process.env, ...wranglerEnv },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://${config.host}:${port}`;
  let runner: Runner | undefined;
  let closing = false;
  const shutdown = (code: number) => {
    if (closing) return;
    closing = true;
    void (async () => {
      await runner?.stop();
      if (wrangler.exitCode === null && wrangler.signalCode === null) {
        const exited = new Promise((resolve) => wrangler.once('exit', resolve));
        wrangler.kill('SIGTERM');
        await exited;
      }
      process.exit(code);
    })();
  };
  wrangler.once('exit', (code) => {
    if (!closing) console.error(`toolgate: wrangler dev exited (${code}); stopping`);
    shutdown(code ?? 1);
  });
  process.on('SIGTERM', () => shutdown(0));
  process.on('SIGINT', () => shutdown(0));
  // The Worker answers /healthz once its Durable Object has built the app.
  for (let attempt = 0; ; attempt += 1) {
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) break;
    if (attempt > 1200 || closing) throw new Error(`wrangler dev did not serve on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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

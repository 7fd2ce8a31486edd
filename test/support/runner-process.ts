// Starts `toolgate runner` as its own process against a server, for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { eventually } from './eventually.ts';
import { repoRoot } from './server-process.ts';

export interface RunnerProcess {
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** How the key reaches the runner: TOOLGATE_RUNNER_KEY (the default), a key file, or --key on its command line. */
export type RunnerKeyVia = 'env' | { keyFile: string } | 'argv';

export async function startRunner(
  url: string,
  key: string,
  dataDir: string,
  via: RunnerKeyVia = 'env',
): Promise<RunnerProcess> {
  const keyArgs = via === 'argv' ? ['--key', key] : typeof via === 'object' ? ['--key-file', via.keyFile] : [];
  // `toolgate runner` runs functions/runner.ts's main with the arguments after `runner`: the pass's
  // bundle of it when there is one (test/support/server-bundle.ts), else the command itself.
  const bundles = process.env.TOOLGATE_TEST_SERVERS;
  const program = bundles ? [join(bundles, 'runner.js')] : ['--import', 'tsx', 'bin/toolgate.js', 'runner'];
  const child = spawn(
    process.execPath,
    [...program, '--url', url, ...keyArgs, '--data', dataDir, '--concurrency', '2'],
    {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...(via === 'env' ? { TOOLGATE_RUNNER_KEY: key } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = once(child, 'exit');
  const started = await eventually(
    () => (child.exitCode !== null ? 'exited' : output.includes('serving') && 'serving'),
    { what: 'the runner to serve', intervalMs: 100 },
  ).catch(() => 'silent');
  if (started !== 'serving') throw new Error(`runner did not start:\n${output}`);
  return {
    child,
    output: () => output,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** A loopback port that was free a moment ago, for a server that must keep its address across restarts. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

// Composition root of a separate runner: `TOOLGATE_RUNNER_KEY=<runner key> toolgate runner --url <server>`.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { Runner } from '../src/runner/node/runner.ts';
import { readRunnerKey, RunnerKeyError } from '../src/runner/node/runner-key.ts';
import { readSandboxSettings, type SandboxSettings } from '../src/runner/node/sandbox-settings.ts';
import { isEntryPoint } from '../src/node/entry-point.ts';

const usage = `Usage: toolgate runner --url <server url> [--key-file <path>] [--data <dir>] [--concurrency <n>] [--network]

Leases bash jobs from a toolgate server (Node or Cloudflare home) and runs them in bubblewrap.
Its key, an API key with the role runner, is read from TOOLGATE_RUNNER_KEY or --key-file.
Commands run only in bubblewrap (TOOLGATE_SANDBOX=none runs them unsandboxed, on purpose), as
TOOLGATE_RUNNER_UID (default 65534) when the runner is root, within TOOLGATE_PROCESS_MEMORY_MB,
TOOLGATE_PROCESS_PIDS and (started processes) TOOLGATE_MAX_PROCESS_MS; see the README.
  --url          the server, e.g. http://127.0.0.1:8787
  --key-file     a file holding the key (surrounding whitespace ignored); refused unless only its owner
                 may read it (chmod 600)
  --key          the key itself: works, with a warning, since other users of the host can read a
                 process's command line
  --data         runner-local directory for workspace copies and the blob cache, kept 0700
                 (default ./.toolgate-runner)
  --concurrency  jobs run at once (default 8)
  --network      let commands use the network (off by default)
  --full-scan    find what an exec changed by scanning the workspace copy, not from an overlay
`;

/** Runs a runner with these command-line arguments (`toolgate runner ...` passes what follows `runner`). */
export function main(args: string[] = process.argv.slice(2)): void {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      'key-file': { type: 'string' },
      data: { type: 'string' },
      concurrency: { type: 'string' },
      network: { type: 'boolean' },
      'full-scan': { type: 'boolean' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  if (!values.url) {
    process.stderr.write(`toolgate runner: --url is required\n\n${usage}`);
    process.exit(2);
  }
  let key: string;
  try {
    const read = readRunnerKey({ flag: values.key, file: values['key-file'], env: process.env.TOOLGATE_RUNNER_KEY });
    if (read.warning) process.stderr.write(`toolgate runner: WARNING: ${read.warning}\n`);
    key = read.key;
  } catch (error) {
    if (!(error instanceof RunnerKeyError)) throw error;
    process.stderr.write(`toolgate runner: ${error.message}\n\n${usage}`);
    process.exit(2);
  }
  // Read once; no process the runner starts needs to inherit it.
  delete process.env.TOOLGATE_RUNNER_KEY;
  const concurrency = values.concurrency === undefined ? 8 : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    process.stderr.write('toolgate runner: --concurrency must be a positive integer\n');
    process.exit(2);
  }
  let sandboxSettings: SandboxSettings;
  try {
    sandboxSettings = readSandboxSettings(process.env);
  } catch (error) {
    process.stderr.write(`toolgate runner: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const overlay = !values['full-scan'];
  const onKeyRefused = (message: string) => {
    process.stderr.write(
      `toolgate runner: the server refuses this key for the runner protocol (${message.slice(0, 300)}); use a key with the role runner.\n`,
    );
    void runner.stop().then(() => process.exit(1));
  };
  const dataDir = resolve(values.data ?? '.toolgate-runner');
  const runner = new Runner({
    url: values.url.replace(/\/+$/, ''),
    key,
    dataDir,
    concurrency,
    network: values.network ?? false,
    overlay,
    sandbox: sandboxSettings,
    onKeyRefused,
  });
  const sandbox = runner.sandbox.describe(overlay);
  if (sandbox.warning) console.warn(`toolgate runner: WARNING: ${sandbox.text}`);
  else console.log(`toolgate runner: ${sandbox.text}`);
  runner.start();
  console.log(
    `toolgate runner ${runner.id} serving ${values.url} (${runner.sandbox.isolation === 'bwrap' ? 'bubblewrap' : 'no sandbox'})`,
  );
  const shutdown = () => void runner.stop().then(() => process.exit(0));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

if (isEntryPoint(import.meta.url)) main();

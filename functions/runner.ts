// Composition root of a separate runner: `toolgate runner --url <server> --key <runner key>`.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { Runner } from '../src/runner/node/runner.ts';
import { describeIsolation, detectIsolation } from '../src/runner/node/sandbox.ts';

const usage = `Usage: toolgate runner --url <server url> --key <key with role runner> [--data <dir>] [--concurrency <n>] [--network]

Leases bash jobs from a toolgate server (Node or Cloudflare home) and runs them in bubblewrap.
  --url          the server, e.g. http://127.0.0.1:8787
  --key          an API key with the role runner (or admin); also TOOLGATE_RUNNER_KEY
  --data         runner-local directory for workspace copies and the blob cache (default ./.toolgate-runner)
  --concurrency  jobs run at once (default 8)
  --network      let commands use the network (off by default)
  --full-scan    find what an exec changed by scanning the workspace copy, not from an overlay
`;

function main(): void {
  // Run as `toolgate runner ...` or directly as `tsx functions/runner.ts ...`.
  const args = process.argv.slice(2);
  if (args[0] === 'runner') args.shift();
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
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
  const key = values.key ?? process.env.TOOLGATE_RUNNER_KEY;
  if (!values.url || !key) {
    process.stderr.write(`toolgate runner: --url and --key are required\n\n${usage}`);
    process.exit(2);
  }
  const concurrency = values.concurrency === undefined ? 8 : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    process.stderr.write('toolgate runner: --concurrency must be a positive integer\n');
    process.exit(2);
  }
  const isolation = detectIsolation();
  const overlay = !values['full-scan'];
  if (isolation === 'bwrap') console.log(`toolgate runner: ${describeIsolation(isolation, overlay)}`);
  else console.warn(`toolgate runner: WARNING: ${describeIsolation(isolation, overlay)}`);
  const runner = new Runner({ url: values.url.replace(/\/+$/, ''), key, dataDir: resolve(values.data ?? '.toolgate-runner'), concurrency, network: values.network ?? false, overlay });
  runner.start();
  console.log(`toolgate runner ${runner.id} serving ${values.url} (${isolation})`);
  const shutdown = () => void runner.stop().then(() => process.exit(0));
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main();

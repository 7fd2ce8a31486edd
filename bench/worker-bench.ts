// Benchmark of the Cloudflare home under wrangler dev: read_file req/s against the Node home's, same run.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-client.ts';

const FOUR_KB = 'x'.repeat(4095) + '\n';

/** Starts `npm run start:worker` (without a runner unless asked for) and answers its URL and a stop function. */
export async function startWorkerHome(
  key: string,
  options: { runner?: boolean } = {},
): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-worker-'));
  const entry = new URL('../functions/start-worker.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      PORT: '0',
      TOOLGATE_DATA: dataDir,
      TOOLGATE_API_KEY: key,
      TOOLGATE_RUNNER: options.runner === true ? 'on' : 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let waited = 0; !/listening on (http:\/\/\S+)/.test(output); waited += 100) {
    if (waited > 120_000 || child.exitCode !== null) throw new Error(`the worker home did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const url = /listening on (http:\/\/\S+)/.exec(output)![1]!;
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function benchWorkerHome(
  nodeUrl: string,
  key: string,
  load: (spec: LoadSpec) => Promise<LoadResult>,
  describe: (result: LoadResult) => string,
  durationMs: number,
): Promise<void> {
  console.log(
    '\n# read_file of a 4 KB file: the Cloudflare home (wrangler dev) vs the Node home (16 connections each)',
  );
  const worker = await startWorkerHome(key);
  try {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    for (const url of [nodeUrl, worker.url]) {
      await fetch(`${url}/v1/workspaces/bench-home`, { method: 'PUT', headers });
      await fetch(`${url}/v1/workspaces/bench-home/tools/write_file`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ path: 'f.txt', content: FOUR_KB }),
      });
    }
    const spec = (url: string): LoadSpec => ({
      url: `${url}/v1/workspaces/bench-home/tools/read_file`,
      method: 'POST',
      headers,
      body: JSON.stringify({ path: 'f.txt' }),
      connections: 16,
      durationMs,
    });
    await load({ ...spec(worker.url), durationMs: 1000 });
    const onNode = await load(spec(nodeUrl));
    const onWorker = await load(spec(worker.url));
    // The local runtime's own ceiling: a route that does nothing but pass through the Worker to one object.
    const ceiling = await load({
      url: `${worker.url}/healthz`,
      method: 'GET',
      headers: {},
      connections: 16,
      durationMs,
    });
    console.log(`node home   : ${describe(onNode)}`);
    console.log(`worker home : ${describe(onWorker)}`);
    console.log(`worker home, GET /healthz (one object, no work): ${describe(ceiling)}`);
    const ratio = onWorker.requests / onWorker.seconds / (onNode.requests / onNode.seconds);
    const ofCeiling = onWorker.requests / onWorker.seconds / (ceiling.requests / ceiling.seconds);
    console.log(
      `worker / node req/s: ${ratio.toFixed(2)}x (target >= 0.5x: ${ratio >= 0.5 ? 'met' : 'NOT met'}); read_file / the runtime's /healthz: ${ofCeiling.toFixed(2)}x`,
    );
  } finally {
    await worker.stop();
  }
}

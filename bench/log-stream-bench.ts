// P15, log streams: bash `logs` calls while 100 streams follow the same busy process, against the same calls with no stream open.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { load, percentile, row, verdict } from './common.ts';
import type { LoadResult } from './load-client.ts';
import type { FollowersReport, FollowersSpec } from './stream-followers.ts';
import { startWorkerHome } from './worker-bench.ts';
import { startWorkerdHome } from './workerd-home.ts';

const STREAMS = 100;
const ROUNDS = 3;
/** About 200 lines of 110 characters a second: every line is an event on each of the 100 streams. */
const BUSY = `i=0; while :; do i=$((i+1)); echo "tick $i $(printf '%0100d' 0)"; sleep 0.005; done`;

/** Followers in a child process, so their reading does not share the server's event loop; answers once all are open. */
async function startFollowers(spec: FollowersSpec): Promise<{ stop(): Promise<FollowersReport> }> {
  const path = new URL('./stream-followers.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', path, '--child', JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.value !== 'open') throw new Error(`the followers did not open: ${String(first.value)}`);
  return {
    async stop() {
      child.stdin.end();
      const report = await iterator.next();
      return JSON.parse(String(report.value)) as FollowersReport;
    },
  };
}

/**
 * P15 on the Node home (the bench's own server) and, unless `--no-worker`, on the Cloudflare home three ways, each
 * against its own no-stream baseline: as `npm run start:worker` serves it (wrangler dev's ProxyWorker and its
 * inspector relay), then with wrangler's inspector off through its ProxyWorker, and straight at the user worker's
 * workerd. Only the last is the Worker and its objects, behind nothing but Miniflare's entry worker.
 */
export async function benchLogStreams(url: string, key: string, durationMs: number, worker: boolean): Promise<void> {
  await measureLogStreams('P15', 'the Node home', url, key, durationMs);
  if (!worker) return;
  const dev = await startWorkerHome(key, { runner: true });
  try {
    await measureLogStreams(
      'P15w-dev',
      // Under wrangler dev the Worker, the objects, the dev proxy and wrangler's Node process share this machine's
      // cores with the followers, the runner and the load client.
      'the Cloudflare home as npm run start:worker serves it (wrangler dev: its ProxyWorker, and its inspector relaying every network event of the Worker to its Node process)',
      dev.url,
      key,
      durationMs,
    );
  } finally {
    await dev.stop();
  }
  const bare = await startWorkerdHome(key);
  try {
    await measureLogStreams(
      'P15w-proxy',
      "the Cloudflare home through wrangler's ProxyWorker, wrangler's inspector off",
      bare.proxyUrl,
      key,
      durationMs,
    );
    await measureLogStreams(
      'P15w-workerd',
      "the Cloudflare home straight at the user worker's workerd, wrangler's inspector off (the Worker and its objects, behind only Miniflare's entry worker)",
      bare.directUrl,
      key,
      durationMs,
    );
  } finally {
    await bare.stop();
  }
}

async function measureLogStreams(
  id: string,
  where: string,
  url: string,
  key: string,
  durationMs: number,
): Promise<void> {
  console.log(
    `\n# ${id} log streams on ${where}: bash logs calls (4 connections) with ${STREAMS} streams following the same busy process vs none, ${ROUNDS} rounds each, turn about`,
  );
  const ws = 'bench-streams';
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await fetch(`${url}/v1/workspaces/${ws}`, { method: 'PUT', headers });
  const bash = async (args: unknown) => {
    const answer = await fetch(`${url}/v1/workspaces/${ws}/tools/bash`, {
      method: 'POST',
      headers,
      body: JSON.stringify(args),
    });
    return ((await answer.json()) as { result: { processId: string; status: string } }).result;
  };
  const { processId } = await bash({ action: 'start', command: BUSY });
  // Measured once the process runs and writes, as a followed process does.
  while ((await bash({ action: 'status', processId })).status !== 'running')
    await new Promise((resolve) => setTimeout(resolve, 50));
  const logsCalls = (ms: number) =>
    load({
      url: `${url}/v1/workspaces/${ws}/tools/bash`,
      method: 'POST',
      headers,
      // The latest page, as an agent following a log asks for it.
      body: JSON.stringify({ action: 'logs', processId, limit: 4096 }),
      connections: 4,
      warmupMs: 300,
      durationMs: ms,
    });
  const merged = { none: empty(), streams: empty() };
  let events = 0;
  let errors = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const side of round % 2 === 0 ? (['none', 'streams'] as const) : (['streams', 'none'] as const)) {
      if (side === 'none') {
        add(merged.none, await logsCalls(durationMs / ROUNDS));
        continue;
      }
      const followers = await startFollowers({
        url,
        key,
        path: `/v1/workspaces/${ws}/processes/${processId}/logs/stream`,
        streams: STREAMS,
      });
      add(merged.streams, await logsCalls(durationMs / ROUNDS));
      const report = await followers.stop();
      events += report.events;
      errors += report.errors;
    }
  }
  await bash({ action: 'stop', processId, graceMs: 0 });
  const p50 = (result: LoadResult) => percentile(result.latenciesMs, 50);
  const p99 = (result: LoadResult) => percentile(result.latenciesMs, 99);
  console.log(
    `logs, no stream      : p50 ${p50(merged.none).toFixed(2)} ms, p99 ${p99(merged.none).toFixed(2)} ms, ${merged.none.requests} calls, errors ${merged.none.errors}`,
  );
  console.log(
    `logs, ${STREAMS} streams   : p50 ${p50(merged.streams).toFixed(2)} ms, p99 ${p99(merged.streams).toFixed(2)} ms, ${merged.streams.requests} calls, errors ${merged.streams.errors}; the streams received ${events} output events, ${errors} stream errors`,
  );
  const ratio = p50(merged.streams) / p50(merged.none);
  // Calls a second with 4 connections busy: the whole slowdown, slow spells included.
  const rate = (result: LoadResult) => result.requests / result.seconds;
  const slowdown = rate(merged.none) / rate(merged.streams);
  row(
    id,
    `logs p50 with ${STREAMS} streams open / with none: ${verdict(ratio, '<= 2x', ratio <= 2)}; calls/s with none / with ${STREAMS} streams: ${verdict(slowdown, '<= 2x', slowdown <= 2)}`,
  );
}

function empty(): LoadResult {
  return { requests: 0, errors: 0, seconds: 0, latenciesMs: [] };
}

function add(into: LoadResult, result: LoadResult): void {
  into.requests += result.requests;
  into.errors += result.errors;
  into.seconds += result.seconds;
  into.latenciesMs.push(...result.latenciesMs);
}

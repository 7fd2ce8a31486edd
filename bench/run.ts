// `npm run bench`: figures as ratios against a baseline measured in the same run.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { readNodeConfig } from '../src/node/config.ts';
import { createNodeHome, startNodeServer } from '../src/node/server.ts';
import { locateBubblewrap } from '../src/runner/node/bubblewrap.ts';
import { benchApplyPatch } from './apply-patch-bench.ts';
import { benchBash } from './bash-bench.ts';
import { benchLiveControl } from './live-control-bench.ts';
import { benchWorkerHome } from './worker-bench.ts';
import type { LoadResult, LoadSpec } from './load-client.ts';

const KEY = 'tg_bench_key_000000000000000000000000000000';
const FOUR_KB = 'x'.repeat(4095) + '\n';

/** Runs the load client in its own process, so the server keeps its event loop to itself. */
async function load(spec: LoadSpec): Promise<LoadResult> {
  const client = new URL('./load-client.ts', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', client, '--child', JSON.stringify(spec)],
    {
      maxBuffer: 512 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as LoadResult;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function describe(result: LoadResult): string {
  const rps = result.requests / result.seconds;
  return `${rps.toFixed(0)} req/s, p50 ${percentile(result.latenciesMs, 50).toFixed(2)} ms, p99 ${percentile(result.latenciesMs, 99).toFixed(2)} ms, errors ${result.errors}`;
}

function verdict(ratio: number, target: string, ok: boolean): string {
  return `${ratio.toFixed(2)}x (target ${target}: ${ok ? 'met' : 'NOT met'})`;
}

/** The sections to run: all, or those named as arguments (`npm run bench -- bash`; `bash` includes `live`, P9). */
const SECTIONS = ['read', 'worker', 'patch', 'bash', 'live'] as const;
const chosen = process.argv.slice(2);
for (const name of chosen)
  if (!(SECTIONS as readonly string[]).includes(name))
    throw new Error(`unknown bench section ${JSON.stringify(name)}; the sections are ${SECTIONS.join(', ')}`);
const runs = (section: (typeof SECTIONS)[number]) => chosen.length === 0 || chosen.includes(section);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const config = readNodeConfig({ TOOLGATE_DATA: dataDir, TOOLGATE_API_KEY: KEY, PORT: '0' });
  const home = await createNodeHome(config);
  // The baseline route lives in the same server process as the API, so both share one event loop.
  const root = new Hono();
  root.get('/bench/bare', (c) => c.text(FOUR_KB));
  root.route('/', home.app);
  const server = await startNodeServer(config, { ...home, app: root as unknown as typeof home.app });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000);

  try {
    if (runs('read')) await benchRead(home, server.url, headers, durationMs);
    if (runs('worker')) await benchWorkerHome(server.url, KEY, load, describe, durationMs);
    if (runs('patch')) await benchApplyPatch(server.url, KEY, home.workspaces);
    if (runs('bash')) await benchBash(server.url, KEY, home.workspaces, home.processes);
    const bwrap = locateBubblewrap();
    if ((runs('bash') || runs('live')) && bwrap)
      await benchLiveControl(server.url, KEY, home.workspaces, home.processes, bwrap);
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** read_file against a bare route, and its latency in a large workspace. */
async function benchRead(
  home: Awaited<ReturnType<typeof createNodeHome>>,
  url: string,
  headers: Record<string, string>,
  durationMs: number,
): Promise<void> {
  home.workspaces.create('small');
  const small = home.workspaces.open('small');
  const files = Array.from({ length: 10 }, (_, i) => ({
    op: 'write' as const,
    path: `src/f${i}.txt`,
    content: new TextEncoder().encode(FOUR_KB),
  }));
  await small.commit(files);

  console.log('\n# read_file of a 4 KB file vs a bare Hono route returning 4 KB (same server, 16 connections)');
  const readSpec = {
    url: `${url}/v1/workspaces/small/tools/read_file`,
    method: 'POST' as const,
    headers,
    body: JSON.stringify({ path: 'src/f3.txt' }),
    connections: 16,
    durationMs,
  };
  await load({ ...readSpec, durationMs: 1000 });
  const bare = await load({ url: `${url}/bench/bare`, method: 'GET', headers: {}, connections: 16, durationMs });
  const read = await load(readSpec);
  console.log(`bare route : ${describe(bare)}`);
  console.log(`read_file  : ${describe(read)}`);
  const ratio = read.requests / read.seconds / (bare.requests / bare.seconds);
  console.log(`read_file / bare req/s: ${verdict(ratio, '>= 0.6x', ratio >= 0.6)}`);

  console.log('\n# read_file latency: a workspace of 10 files vs one of 100,000 files (1 connection)');
  home.workspaces.create('large');
  const large = home.workspaces.open('large');
  for (let batch = 0; batch < 100; batch += 1) {
    await large.commit(
      Array.from({ length: 1000 }, (_, i) => ({
        op: 'write' as const,
        path: `src/d${batch}/f${i}.txt`,
        content: new TextEncoder().encode(`${batch}/${i}\n${FOUR_KB}`),
      })),
    );
  }
  console.log(`large workspace: ${home.workspaces.info('large')?.files} files`);
  const latencySpec = (ws: string, path: string) => ({
    url: `${url}/v1/workspaces/${ws}/tools/read_file`,
    method: 'POST' as const,
    headers,
    body: JSON.stringify({ path }),
    connections: 1,
    durationMs,
  });
  await load({ ...latencySpec('large', 'src/d50/f500.txt'), durationMs: 1000 });
  const tenFiles = await load(latencySpec('small', 'src/f3.txt'));
  const manyFiles = await load(latencySpec('large', 'src/d50/f500.txt'));
  console.log(`10 files      : ${describe(tenFiles)}`);
  console.log(`100,000 files : ${describe(manyFiles)}`);
  const latencyRatio = percentile(manyFiles.latenciesMs, 50) / percentile(tenFiles.latenciesMs, 50);
  console.log(`p50 latency 100,000 / 10 files: ${verdict(latencyRatio, '<= 1.2x', latencyRatio <= 1.2)}`);
}

await main();

// `npm run bench`: figures as ratios against a baseline measured in the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { readNodeConfig } from '../src/node/config.ts';
import { createNodeHome, startNodeServer } from '../src/node/server.ts';
import { locateBubblewrap } from '../src/runner/node/bubblewrap.ts';
import { benchApplyPatch } from './apply-patch-bench.ts';
import { benchArchive } from './archive-bench.ts';
import { benchBash } from './bash-bench.ts';
import { benchEdge } from './edge-bench.ts';
import { benchFork } from './fork-bench.ts';
import { describe, interleaved, load, percentile, perSecond, printRows, row, verdict } from './common.ts';
import { benchLiveControl } from './live-control-bench.ts';
import { benchLogStreams } from './log-stream-bench.ts';
import type { LoadResult } from './load-client.ts';
import { benchSequentialRead } from './mcp-bench.ts';
import { benchScale } from './scale-bench.ts';
import { benchSearch } from './search-bench.ts';
import { benchWorkerHome } from './worker-bench.ts';
import { benchWrite } from './write-bench.ts';

const KEY = 'tg_bench_key_000000000000000000000000000000';
const FOUR_KB = 'x'.repeat(4095) + '\n';
/** The file every read_file row reads, in the workspace `small`. */
const READ_PATH = 'src/f3.txt';

/** The sections to run: all, or those named as arguments (`npm run bench -- bash`; `bash` includes `live`: P9, P15, and `edge`: P15-edge, P8-edge). */
const SECTIONS = [
  'read',
  'write',
  'worker',
  'scale',
  'patch',
  'bash',
  'edge',
  'live',
  'search',
  'fork',
  'archive',
] as const;
/** `--files-scale` adds P12 (grep over 100,000 files) to the search section; `--no-worker` leaves out the P15w rows (live on the Cloudflare home). */
const FLAGS = ['--files-scale', '--no-worker'] as const;
const flags = process.argv.slice(2).filter((argument) => argument.startsWith('--'));
for (const flag of flags)
  if (!(FLAGS as readonly string[]).includes(flag))
    throw new Error(`unknown bench flag ${JSON.stringify(flag)}; the flags are ${FLAGS.join(', ')}`);
const chosen = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
for (const name of chosen)
  if (!(SECTIONS as readonly string[]).includes(name))
    throw new Error(`unknown bench section ${JSON.stringify(name)}; the sections are ${SECTIONS.join(', ')}`);
const runs = (section: (typeof SECTIONS)[number]) => chosen.length === 0 || chosen.includes(section);

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const config = readNodeConfig({ TOOLGATE_DATA: dataDir, TOOLGATE_API_KEY: KEY, PORT: '0' });
  const home = await createNodeHome(config);
  // The baseline route lives in the same server process as the API, so both share one event loop. It
  // takes the same request as read_file and answers the same JSON body that read_file answers.
  let bareAnswer: Record<string, unknown> = {};
  const root = new Hono();
  root.post('/bench/bare', (c) => c.json(bareAnswer));
  root.route('/', home.app);
  const server = await startNodeServer(config, { ...home, app: root as unknown as typeof home.app });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000);

  try {
    home.workspaces.create('small');
    await home.workspaces.open('small').commit(
      Array.from({ length: 10 }, (_, i) => ({
        op: 'write' as const,
        path: `src/f${i}.txt`,
        content: new TextEncoder().encode(FOUR_KB),
      })),
    );
    const readBody = JSON.stringify({ path: READ_PATH });
    const answer = await fetch(`${server.url}/v1/workspaces/small/tools/read_file`, {
      method: 'POST',
      headers,
      body: readBody,
    });
    if (answer.status !== 200) throw new Error(`read_file answered ${answer.status}: ${await answer.text()}`);
    bareAnswer = (await answer.json()) as Record<string, unknown>;
    // The bare route's req/s at 16 connections, measured once in a run (P1a's baseline, P10's context).
    const bareSpec = (ms: number) =>
      load({
        url: `${server.url}/bench/bare`,
        method: 'POST',
        headers,
        body: readBody,
        connections: 16,
        warmupMs: 1000,
        durationMs: ms,
      });
    let bare: Promise<LoadResult> | undefined;
    const bare16 = {
      measure: bareSpec,
      /** Keeps P1a's measurement for the rows after it. */
      keep: (result: LoadResult) => (bare = Promise.resolve(result)),
      get: () => (bare ??= bareSpec(durationMs)),
    };

    if (runs('read')) {
      await benchRead(server.url, headers, readBody, bare16, durationMs);
      await benchSequentialRead(server.url, KEY, 'small', READ_PATH, FOUR_KB, durationMs);
      await benchReadLatency(home, server.url, headers, durationMs);
    }
    if (runs('write')) await benchWrite(server.url, KEY, home.workspaces, bare16.get);
    if (runs('worker')) await benchWorkerHome(server.url, KEY, load, describe, durationMs);
    if (runs('scale')) await benchScale(KEY, durationMs);
    if (runs('patch')) await benchApplyPatch(server.url, KEY, home.workspaces);
    if (runs('search'))
      await benchSearch(server.url, KEY, home.workspaces, {
        filesScale: flags.includes('--files-scale'),
        runner: locateBubblewrap() !== undefined,
      });
    if (runs('fork')) await benchFork(server.url, KEY, home.workspaces);
    if (runs('archive')) await benchArchive(server.url, KEY, home.workspaces, home.blobsSettled);
    if (runs('bash')) await benchBash(server.url, KEY, home.workspaces, home.processes);
    if ((runs('bash') || runs('edge')) && locateBubblewrap()) await benchEdge(server.url, KEY, home.workspaces);
    const bwrap = locateBubblewrap();
    if ((runs('bash') || runs('live')) && bwrap)
      await benchLiveControl(server.url, KEY, home.workspaces, home.processes, bwrap);
    if ((runs('bash') || runs('live')) && bwrap)
      await benchLogStreams(server.url, KEY, durationMs, !flags.includes('--no-worker'));
    printRows();
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** P1a: read_file against a bare route answering the same JSON, 16 connections. */
async function benchRead(
  url: string,
  headers: Record<string, string>,
  readBody: string,
  bare16: { measure: (durationMs: number) => Promise<LoadResult>; keep: (result: LoadResult) => void },
  durationMs: number,
): Promise<void> {
  console.log(
    '\n# P1a: read_file of a 4 KB file vs a bare Hono route answering the same JSON (same server, same request, 16 connections)',
  );
  const readSpec = {
    url: `${url}/v1/workspaces/small/tools/read_file`,
    method: 'POST' as const,
    headers,
    body: readBody,
    connections: 16,
    durationMs,
  };
  // The server warms up on read_file first; each measuring client warms up in its own process too.
  await load({ ...readSpec, durationMs: 1000 });
  const { bare, read } = await interleaved(
    { bare: bare16.measure, read: (ms) => load({ ...readSpec, warmupMs: 1000, durationMs: ms }) },
    durationMs,
  );
  bare16.keep(bare);
  console.log(`bare route : ${describe(bare)}`);
  console.log(`read_file  : ${describe(read)}`);
  const ratio = perSecond(read) / perSecond(bare);
  row('P1a', `read_file / bare JSON route req/s: ${verdict(ratio, '>= 0.6x', ratio >= 0.6)}`);
}

/** read_file latency in a large workspace. */
async function benchReadLatency(
  home: Awaited<ReturnType<typeof createNodeHome>>,
  url: string,
  headers: Record<string, string>,
  durationMs: number,
): Promise<void> {
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

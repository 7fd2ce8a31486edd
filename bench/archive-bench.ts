// P14: upload of a 5,000 x 1 KiB tar over HTTP against `tar -x` of it to local disk, and download
// of the workspace against `tar -c` of the same tree, turn about, medians of each: wall-clock time,
// and CPU time (the server process's, its writing threads included, against tar's), which a shared
// machine's load disturbs far less. The server's CPU includes the work an upload leaves for after
// its answer (the blob journal moved to files), which each round waits for before tar runs.
import { execFile, fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Workspaces } from '../src/workspace/workspaces.ts';
import type { ArchiveCallSpec } from './archive-client.ts';
import { archiveCall, percentile, row, verdict } from './common.ts';

const FILES = 5000;
const RUNS = 9;
const PACED_RUNS = 5;
const TARGET_RATIO = 2;
const run = promisify(execFile);

/** Milliseconds `work` takes, and the CPU milliseconds of the children it waited for (tar). */
async function timed(work: () => Promise<unknown>): Promise<{ ms: number; cpu: number }> {
  const cpu = childrenCpuMs();
  const started = performance.now();
  await work();
  return { ms: performance.now() - started, cpu: childrenCpuMs() - cpu };
}

/** CPU milliseconds of this process's children waited for so far (Linux: /proc/self/stat, 10 ms ticks); NaN elsewhere. */
function childrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // cutime and cstime, fields 16 and 17 of the whole line, in clock ticks of 10 ms.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return Number.NaN;
  }
}

/**
 * An upload from bench/archive-client.ts in a child process with an IPC channel: once its untimed
 * upload is answered, the client waits until `settled` resolves (the server's work for that upload
 * over), so the timed upload meets none of it.
 */
async function uploadCall(spec: ArchiveCallSpec, settled: () => Promise<void>): Promise<number> {
  const child = fork(new URL('./archive-client.ts', import.meta.url).pathname, ['--child', JSON.stringify(spec)], {
    execArgv: ['--no-warnings', '--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.on('message', () => void settled().then(() => child.send('go')));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the archive client exited with ${code}`);
  return JSON.parse(stdout) as number;
}

/**
 * The server's share of one archive call from bench/archive-client.ts: its wall time as the client
 * timed it, this process's CPU time (the server's, threads included) over the client's two calls
 * (an untimed one first) and the work each left for after its answer, halved, and how long that
 * work went on after the timed call's answer.
 */
async function served(
  call: () => Promise<number>,
  settled: () => Promise<void>,
): Promise<{ ms: number; cpu: number; after: number }> {
  const before = process.cpuUsage();
  const ms = await call();
  const answered = performance.now();
  await settled();
  const after = performance.now() - answered;
  const used = process.cpuUsage(before);
  return { ms, cpu: (used.user + used.system) / 1000 / 2, after };
}

export async function benchArchive(
  url: string,
  key: string,
  workspaces: Workspaces,
  blobsSettled: () => Promise<void>,
): Promise<void> {
  console.log(`\n# P14: archives of ${FILES.toLocaleString('en')} x 1 KiB files over HTTP vs GNU tar on local disk`);
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-archive-'));
  try {
    for (let i = 0; i < FILES; i++) {
      await mkdir(join(dir, 'tree', `d${i % 50}`), { recursive: true });
      // Each file its own content, as in a real tree (the store keeps one copy of equal contents).
      await writeFile(join(dir, 'tree', `d${i % 50}`, `f${i}.txt`), `${i}`.padEnd(1023, '.') + '\n');
    }
    const tarFile = join(dir, 'tree.tar');
    await run('tar', ['-c', '-f', tarFile, '-C', join(dir, 'tree'), '.']);

    // The HTTP client runs in its own process, as a user's would, so the server's event loop is its own.
    const upload = async (i: number) => {
      workspaces.create(`archive-${i}`);
      workspaces.create(`archive-${i}-warm-up`);
      return uploadCall(
        {
          url,
          key,
          kind: 'upload',
          workspace: `archive-${i}`,
          warmUpWorkspace: `archive-${i}-warm-up`,
          tarFile,
          expect: FILES,
        },
        blobsSettled,
      );
    };
    const download = () => archiveCall({ url, key, kind: 'download', workspace: 'archive-0', expect: FILES * 1024 });
    const extract = async (i: number) => {
      await mkdir(join(dir, `x${i}`));
      await run('tar', ['-x', '-f', tarFile, '-C', join(dir, `x${i}`)]);
    };
    // To a file, not /dev/null: GNU tar skips reading the files when it writes to /dev/null.
    const create = async (i: number) => run('tar', ['-c', '-f', join(dir, `c${i}.tar`), '-C', join(dir, 'tree'), '.']);

    // One of each first (caches, JIT), then the two sides turn about.
    await upload(0);
    await blobsSettled();
    await download();
    await extract(0);
    await create(0);
    type Sample = { ms: number; cpu: number; after?: number };
    const times = { upload: [] as Sample[], extract: [] as Sample[], download: [] as Sample[], create: [] as Sample[] };
    const loadBefore = loadavg()[0]!;
    for (let i = 1; i <= RUNS; i++) {
      times.upload.push(await served(() => upload(i), blobsSettled));
      times.extract.push(await timed(() => extract(i)));
      times.download.push(await served(download, blobsSettled));
      times.create.push(await timed(() => create(i)));
    }
    const loadAfter = loadavg()[0]!;
    for (let i = 0; i <= RUNS; i++) {
      await workspaces.delete(`archive-${i}`);
      await workspaces.delete(`archive-${i}-warm-up`);
    }
    const p50 = (values: number[]) => percentile(values, 50);
    const wall = (samples: Sample[]) => p50(samples.map((sample) => sample.ms));
    const cpu = (samples: Sample[]) => p50(samples.map((sample) => sample.cpu));
    /** The median of each round's ratio: the two sides of a round ran back to back, under one load. */
    const paired = (ours: Sample[], theirs: Sample[], of: 'ms' | 'cpu') =>
      p50(ours.map((sample, index) => sample[of] / theirs[index]![of]));
    const line = (name: string, samples: Sample[]) =>
      console.log(
        `${name.padEnd(16)}: ${wall(samples).toFixed(1)} ms p50 wall, ${cpu(samples).toFixed(0)} ms p50 CPU over ${RUNS}`,
      );
    line('upload (HTTP)', times.upload);
    line('tar -x', times.extract);
    line('download (HTTP)', times.download);
    line('tar -c', times.create);
    console.log(
      `upload's work after its answer (journal moved to files): ${p50(times.upload.map((sample) => sample.after!)).toFixed(0)} ms p50 wall, its CPU counted in the upload's`,
    );
    console.log(`load average (1 min): ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after`);
    const upCpu = paired(times.upload, times.extract, 'cpu');
    const downCpu = paired(times.download, times.create, 'cpu');
    console.log(
      `paired ratios (p50 of rounds): upload ${paired(times.upload, times.extract, 'ms').toFixed(2)}x wall, ${upCpu.toFixed(2)}x CPU; ` +
        `download ${paired(times.download, times.create, 'ms').toFixed(2)}x wall, ${downCpu.toFixed(2)}x CPU`,
    );
    // An upload as over a network, not loopback: how long after its last byte the answer comes.
    const paced: number[] = [];
    for (let i = 0; i < PACED_RUNS; i++) {
      workspaces.create(`archive-paced-${i}`);
      paced.push(
        await archiveCall({ url, key, kind: 'paced', workspace: `archive-paced-${i}`, tarFile, expect: FILES }),
      );
      await blobsSettled();
      await workspaces.delete(`archive-paced-${i}`);
    }
    console.log(
      `upload at about 100 Mbit/s: its answer ${p50(paced).toFixed(0)} ms p50 after its last byte (min ${Math.min(...paced).toFixed(0)}), the unpacking done as it arrived`,
    );
    const up = wall(times.upload) / wall(times.extract);
    const down = wall(times.download) / wall(times.create);
    row(
      'P14',
      `upload ${wall(times.upload).toFixed(0)} ms, ${verdict(up, `<= ${TARGET_RATIO}x tar -x`, up <= TARGET_RATIO)}; ` +
        `download ${wall(times.download).toFixed(0)} ms, ${verdict(down, `<= ${TARGET_RATIO}x tar -c`, down <= TARGET_RATIO)}; ` +
        `CPU ${upCpu.toFixed(1)}x and ${downCpu.toFixed(1)}x; load ${loadBefore.toFixed(0)}-${loadAfter.toFixed(0)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

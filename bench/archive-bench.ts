// P14: upload of a 5,000 x 1 KiB tar over HTTP against `tar -x` of it to local disk, and download
// of the workspace against `tar -c` of the same tree, turn about, medians of each.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Workspaces } from '../src/workspace/workspaces.ts';
import { archiveCall, percentile, row, verdict } from './common.ts';

const FILES = 5000;
const RUNS = 9;
const TARGET_RATIO = 2;
const run = promisify(execFile);

/** Milliseconds `work` takes. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function benchArchive(url: string, key: string, workspaces: Workspaces): Promise<void> {
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
      return archiveCall({
        url,
        key,
        kind: 'upload',
        workspace: `archive-${i}`,
        warmUpWorkspace: `archive-${i}-warm-up`,
        tarFile,
        expect: FILES,
      });
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
    await download();
    await extract(0);
    await create(0);
    const times = { upload: [] as number[], extract: [] as number[], download: [] as number[], create: [] as number[] };
    for (let i = 1; i <= RUNS; i++) {
      times.upload.push(await upload(i));
      times.extract.push(await timed(() => extract(i)));
      times.download.push(await download());
      times.create.push(await timed(() => create(i)));
    }
    for (let i = 0; i <= RUNS; i++) {
      await workspaces.delete(`archive-${i}`);
      await workspaces.delete(`archive-${i}-warm-up`);
    }
    const p50 = (values: number[]) => percentile(values, 50);
    const line = (name: string, values: number[]) =>
      console.log(`${name.padEnd(14)}: ${p50(values).toFixed(1)} ms p50 over ${RUNS}`);
    line('upload (HTTP)', times.upload);
    line('tar -x', times.extract);
    line('download (HTTP)', times.download);
    line('tar -c', times.create);
    const up = p50(times.upload) / p50(times.extract);
    const down = p50(times.download) / p50(times.create);
    row(
      'P14',
      `upload ${p50(times.upload).toFixed(0)} ms, ${verdict(up, `<= ${TARGET_RATIO}x tar -x`, up <= TARGET_RATIO)}; ` +
        `download ${p50(times.download).toFixed(0)} ms, ${verdict(down, `<= ${TARGET_RATIO}x tar -c`, down <= TARGET_RATIO)}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

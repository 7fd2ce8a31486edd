// Benchmarks of bash on the in-process runner: round trip, warm and cold workspaces, output throughput.
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapArgs, locateBubblewrap } from '../src/runner/node/bubblewrap.ts';
import type { ProcessStore } from '../src/processes/process-store.ts';
import type { Workspaces } from '../src/workspace/workspaces.ts';

const RUNS = 30;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface BashAnswer {
  exitCode?: number;
  stderr?: string;
  processId?: string;
}

async function call(url: string, key: string, ws: string, args: unknown): Promise<BashAnswer> {
  const response = await fetch(`${url}/v1/workspaces/${ws}/tools/bash`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const body = (await response.json()) as { result: BashAnswer };
  if (response.status !== 200) throw new Error(`bash answered ${response.status}: ${JSON.stringify(body)}`);
  return body.result;
}

/**
 * Flushes what is written and gives the disk a moment, so a timing starts on a quiet disk; and
 * collects the heap (`npm run bench` exposes gc), so the bench's own garbage (the trees it
 * builds and writes) is not collected inside a timing and billed to the server.
 */
async function settleDisk(): Promise<void> {
  await promisify(execFile)('sync');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  (globalThis as { gc?: () => void }).gc?.();
}

async function timeExec(url: string, key: string, ws: string, command: string): Promise<number> {
  const started = performance.now();
  // On a runner: this section measures the runner's round trip (auto would answer these in the handler).
  const result = await call(url, key, ws, { action: 'exec', command, engine: 'runner' });
  if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode}: ${result.stderr}`);
  return performance.now() - started;
}

export async function benchBash(
  url: string,
  key: string,
  workspaces: Workspaces,
  processes: ProcessStore,
): Promise<void> {
  const bwrap = locateBubblewrap();
  if (!bwrap) {
    console.log('\n# bash: skipped (bubblewrap is not installed)');
    return;
  }
  console.log('\n# bash: exec `true` over HTTP vs a direct `bwrap ... true` spawn');
  workspaces.create('bench-empty');
  // Everything here is asynchronous: the server under test shares this process's event loop.
  const emptyDir = await mkdtemp(join(tmpdir(), 'toolgate-bench-bwrap-'));
  // Alternated, run by run, so both see the same machine (a shared machine's speed drifts).
  const direct: number[] = [];
  const viaHttp: number[] = [];
  for (let run = 0; run < RUNS + 2; run += 1) {
    const started = performance.now();
    const child = spawn(
      bwrap,
      bubblewrapArgs({
        workspaceDir: emptyDir,
        cwd: '/workspace',
        env: { PATH: '/usr/bin:/bin' },
        network: false,
        command: 'true',
      }),
      { env: {} },
    );
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
    if (code !== 0) throw new Error(`bwrap failed with ${code}`);
    const elapsed = performance.now() - started;
    const exec = await timeExec(url, key, 'bench-empty', 'true');
    if (run >= 2) {
      direct.push(elapsed);
      viaHttp.push(exec);
    }
  }
  await rm(emptyDir, { recursive: true, force: true });
  const budget = 2 * median(direct) + 10;
  console.log(`direct bwrap true : p50 ${median(direct).toFixed(2)} ms`);
  console.log(`exec true (HTTP)  : p50 ${median(viaHttp).toFixed(2)} ms`);
  console.log(
    `exec / direct: ${(median(viaHttp) / median(direct)).toFixed(2)}x; target <= 2x + 10 ms = ${budget.toFixed(1)} ms: ${median(viaHttp) <= budget ? 'met' : 'NOT met'}`,
  );

  console.log(
    '\n# bash: exec in a warm 5,000-file workspace vs an empty one; the cold first exec vs `cp -r` of the same tree, in 5 pairs',
  );
  // Five workspaces of 5,000 files each, with contents of their own (nothing in the runner's blob
  // cache). Each cold exec is paired with a `cp -r` of the same tree timed right after it, and
  // the pairs' ratios are compared: file creation on a disk varies a lot over minutes (on ext4
  // without a journal, creating files soon after many were deleted scans the deleted inodes),
  // and a pair sees the same disk.
  const treeFiles = (tree: number) =>
    Array.from({ length: 5000 }, (_, i) => ({
      op: 'write' as const,
      path: `src/d${i % 50}/f${i}.ts`,
      content: new TextEncoder().encode(`export const v${i} = ${i}; // ${tree}\n`.repeat(20)),
    }));
  const colds: number[] = [];
  const copies: number[] = [];
  const scratch: string[] = [];
  for (let tree = 0; tree < 5; tree += 1) {
    const files = treeFiles(tree);
    workspaces.create(`bench-tree-${tree}`);
    await workspaces.open(`bench-tree-${tree}`).commit(files);
    const source = await mkdtemp(join(tmpdir(), 'toolgate-bench-tree-'));
    scratch.push(source, `${source}-copy`);
    for (const file of files) {
      await mkdir(join(source, file.path, '..'), { recursive: true });
      await writeFile(join(source, file.path), file.content);
    }
    // Each timing starts from a settled disk: the commit of 5,000 blobs and the source tree leave
    // writes in flight, and after the cold exec the runner caches its blobs.
    await settleDisk();
    colds.push(await timeExec(url, key, `bench-tree-${tree}`, 'true'));
    await settleDisk();
    const started = performance.now();
    await promisify(execFile)('cp', ['-r', source, `${source}-copy`]);
    copies.push(performance.now() - started);
  }
  const warm: number[] = [];
  const empty: number[] = [];
  for (let run = 0; run < 10; run += 1) {
    warm.push(await timeExec(url, key, 'bench-tree-0', 'true'));
    empty.push(await timeExec(url, key, 'bench-empty', 'true'));
  }
  // Removed only after the last timing: deleting thousands of files slows creating files for a while.
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  const warmRatio = median(warm) / median(empty);
  const coldRatio = median(colds.map((cold, index) => cold / copies[index]!));
  const pairs = colds.map((cold, index) => `${cold.toFixed(0)}/${copies[index]!.toFixed(0)}`).join(', ');
  console.log(`empty workspace   : p50 ${median(empty).toFixed(2)} ms`);
  console.log(
    `warm, 5,000 files : p50 ${median(warm).toFixed(2)} ms -> ${warmRatio.toFixed(2)}x (target <= 1.2x: ${warmRatio <= 1.2 ? 'met' : 'NOT met'})`,
  );
  console.log(
    `cold first exec / cp -r, ms: ${pairs} -> median ratio ${coldRatio.toFixed(2)}x (target <= 2x: ${coldRatio <= 2 ? 'met' : 'NOT met'})`,
  );

  console.log('\n# bash: a process writing 100 MB of output');
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const snapshot = await call(url, key, 'bench-empty', {
    action: 'start',
    command: 'head -c 100000000 /dev/zero | tr "\\0" x',
  });
  const record = await processes.waitForEnd('bench-empty', snapshot.processId!, 600_000);
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const growth = (peak - rssBefore) / (1024 * 1024);
  const rate = 100 / seconds;
  console.log(`status ${record.status}, ${record.outputChars} characters in ${seconds.toFixed(2)} s`);
  console.log(`log store throughput: ${rate.toFixed(1)} MB/s (target >= 50: ${rate >= 50 ? 'met' : 'NOT met'})`);
  console.log(`server RSS growth   : ${growth.toFixed(1)} MB (target <= 64: ${growth <= 64 ? 'met' : 'NOT met'})`);
}

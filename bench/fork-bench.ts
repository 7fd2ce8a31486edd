// P13: fork of a 5,000-file workspace over HTTP, against `cp -r` of the same tree on local disk.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Workspaces } from '../src/workspace/workspaces.ts';
import { row } from './common.ts';
import { generateTree } from './search-bench.ts';

const RUNS = 21;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function benchFork(url: string, key: string, workspaces: Workspaces): Promise<void> {
  console.log('\n# P13: fork of a 5,000-file workspace (20 MB) vs cp -r of the same tree on local disk');
  const tree = generateTree(5000, 4000);
  workspaces.create('fork-5k');
  const encoder = new TextEncoder();
  await workspaces
    .open('fork-5k')
    .commit([...tree].map(([path, content]) => ({ op: 'write' as const, path, content: encoder.encode(content) })));
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-fork-'));
  try {
    for (const [path, content] of tree) {
      await mkdir(join(dir, 'src', path, '..'), { recursive: true });
      await writeFile(join(dir, 'src', path), content);
    }
    const forkMs: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const started = performance.now();
      const response = await fetch(`${url}/v1/workspaces/fork-5k/fork`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: `fork-5k-${i}` }),
      });
      const elapsed = performance.now() - started;
      if (response.status !== 201) throw new Error(`fork answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      if (i >= 2) forkMs.push(elapsed);
    }
    const copyMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await promisify(execFile)('cp', ['-r', join(dir, 'src'), join(dir, `copy-${i}`)]);
      copyMs.push(performance.now() - started);
    }
    for (let i = 0; i < RUNS + 2; i++) await workspaces.delete(`fork-5k-${i}`);
    const fork = median(forkMs);
    const copy = median(copyMs);
    console.log(`fork (HTTP)  : ${fork.toFixed(1)} ms p50 over ${RUNS}`);
    console.log(`cp -r        : ${copy.toFixed(1)} ms p50 over 5`);
    row(
      'P13',
      `fork p50: ${fork.toFixed(1)} ms, ${(fork / copy).toFixed(2)}x cp -r (target <= 30 ms: ${fork <= 30 ? 'met' : 'NOT met'})`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// P11 and P12: grep of a literal over a generated tree, answered from the store, against ripgrep over
// the same tree on local disk and against `grep -rn` run through the runner (bash exec).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Workspaces } from '../src/workspace/workspaces.ts';
import { row, verdict } from './common.ts';

const NEEDLE = 'needle_in_the_tree_42';
const WORDS = (
  'const let function return import export class interface type async await if else for while ' +
  'switch case break continue new this value result error config request response handler ' +
  'workspace manifest blob commit path guard lease runner process output input string number'
).split(' ');

/** A deterministic tree: `files` files of about `bytesEach` bytes in nested folders; 1 % hold NEEDLE once. */
export function generateTree(files: number, bytesEach: number): Map<string, string> {
  let seed = 42;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed;
  };
  const tree = new Map<string, string>();
  for (let i = 0; i < files; i++) {
    const lines: string[] = [];
    let size = 0;
    while (size < bytesEach) {
      const words = Array.from({ length: 6 + (next() % 8) }, () => WORDS[next() % WORDS.length]);
      const line = `  ${words.join(' ')};`;
      lines.push(line);
      size += line.length + 1;
    }
    if (i % 100 === 7) lines[next() % lines.length] = `  const x = '${NEEDLE}';`;
    const path = `src/m${i % 10}/d${Math.floor(i / 10) % 50}/file${i}.ts`;
    tree.set(path, `${lines.join('\n')}\n`);
  }
  return tree;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed(runs: number, work: () => Promise<void>): Promise<number> {
  // A few calls first: the server's search code is compiled hot, as it is on a server in use.
  for (let i = 0; i < 5; i++) await work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
}

interface SearchSide {
  grepMs: number;
  rgMs: number;
  matches: number;
}

/** Fills workspace `ws` and a directory with the tree, then times grep (HTTP) and rg (a process) on it. */
async function measure(
  url: string,
  key: string,
  workspaces: Workspaces,
  ws: string,
  tree: Map<string, string>,
  runs: number,
): Promise<SearchSide & { dir: string }> {
  workspaces.create(ws);
  const workspace = workspaces.open(ws);
  const encoder = new TextEncoder();
  const entries = [...tree];
  for (let at = 0; at < entries.length; at += 5000) {
    await workspace.commit(
      entries
        .slice(at, at + 5000)
        .map(([path, content]) => ({ op: 'write' as const, path, content: encoder.encode(content) })),
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-search-'));
  for (const [path, content] of entries) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  let matches = 0;
  const grepMs = await timed(runs, async () => {
    const response = await fetch(`${url}/v1/workspaces/${ws}/tools/grep`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ pattern: NEEDLE, outputMode: 'content', maxResults: 10_000 }),
    });
    const body = (await response.json()) as { result?: { matches: unknown[] } };
    if (response.status !== 200 || !body.result)
      throw new Error(`grep answered ${response.status}: ${JSON.stringify(body)}`);
    matches = body.result.matches.length;
  });
  let rgMatches = 0;
  const rgMs = await timed(runs, async () => {
    const { stdout } = await promisify(execFile)('rg', ['-n', '--no-heading', NEEDLE, '.'], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    rgMatches = stdout.split('\n').filter(Boolean).length;
  });
  if (rgMatches !== matches) throw new Error(`grep found ${matches} lines, rg ${rgMatches}`);
  return { grepMs, rgMs, matches, dir };
}

async function timeRunnerGrep(url: string, key: string, ws: string, runs: number): Promise<number> {
  return timed(runs, async () => {
    const response = await fetch(`${url}/v1/workspaces/${ws}/tools/bash`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'exec', command: `grep -rn ${NEEDLE} . | wc -l`, engine: 'runner' }),
    });
    const body = (await response.json()) as { result?: { exitCode: number; stderr: string } };
    if (body.result?.exitCode !== 0) throw new Error(`bash exec answered ${JSON.stringify(body).slice(0, 300)}`);
  });
}

export async function benchSearch(
  url: string,
  key: string,
  workspaces: Workspaces,
  options: { filesScale: boolean; runner: boolean },
): Promise<void> {
  console.log(
    '\n# P11: grep of a literal over 5,000 files (20 MB, cache warm) vs rg on local disk and vs grep -rn through the runner',
  );
  const small = await measure(url, key, workspaces, 'search-5k', generateTree(5000, 4000), 15);
  try {
    console.log(`toolgate grep : ${small.grepMs.toFixed(1)} ms (median), ${small.matches} matching lines`);
    console.log(`rg (process)  : ${small.rgMs.toFixed(1)} ms (median)`);
    const ratio = small.grepMs / small.rgMs;
    row('P11', `grep / rg time: ${verdict(ratio, '<= 2.0x', ratio <= 2)}`);
    if (options.runner) {
      const runnerMs = await timeRunnerGrep(url, key, 'search-5k', 5);
      console.log(`grep -rn via bash exec on the runner: ${runnerMs.toFixed(1)} ms (median)`);
      const speedup = runnerMs / small.grepMs;
      row('P11-bash', `bash exec grep -rn / grep time: ${verdict(speedup, '>= 10x', speedup >= 10)}`);
    } else {
      console.log('(no bubblewrap: the runner comparison is left out)');
    }
  } finally {
    await rm(small.dir, { recursive: true, force: true });
  }
  if (!options.filesScale) {
    console.log('(P12, 100,000 files, runs with `npm run bench -- search --files-scale`)');
    return;
  }
  console.log('\n# P12: the same grep over 100,000 files vs the 5,000-file time');
  const large = await measure(url, key, workspaces, 'search-100k', generateTree(100_000, 4000), 5);
  try {
    console.log(`toolgate grep : ${large.grepMs.toFixed(1)} ms (median), ${large.matches} matching lines`);
    console.log(`rg (process)  : ${large.rgMs.toFixed(1)} ms (median)`);
    const ratio = large.grepMs / small.grepMs;
    row('P12', `grep 100,000 files / 5,000 files time: ${verdict(ratio, '<= 10x', ratio <= 10)}`);
  } finally {
    await rm(large.dir, { recursive: true, force: true });
  }
}

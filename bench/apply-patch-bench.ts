// Benchmark: the 200-hunk / 5,000-line patch over HTTP vs `git apply` of the same change on disk.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { Workspaces } from '../src/workspace/workspaces.ts';

const RUNS = 15;

function bigFile(): { before: string; after: string; codexPatch: string } {
  const lines = Array.from(
    { length: 5000 },
    (_, i) => `line ${i}: const value${i} = compute(${i}, "${'x'.repeat(i % 40)}");`,
  );
  const changed = [...lines];
  const hunks: string[] = [];
  for (let h = 0; h < 200; h += 1) {
    const at = h * 25 + 10;
    changed[at] = `line ${at}: const value${at} = patched(${at});`;
    hunks.push('@@', ` ${lines[at - 1]}`, `-${lines[at]}`, `+${changed[at]}`, ` ${lines[at + 1]}`);
  }
  return {
    before: `${lines.join('\n')}\n`,
    after: `${changed.join('\n')}\n`,
    codexPatch: ['*** Begin Patch', '*** Update File: big.ts', ...hunks, '*** End Patch', ''].join('\n'),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function benchApplyPatch(url: string, key: string, workspaces: Workspaces): Promise<void> {
  console.log('\n# apply_patch: 200 hunks in a 5,000-line file over HTTP vs `git apply` of the same diff on disk');
  const { before, after, codexPatch } = bigFile();
  const unified = createTwoFilesPatch('a/big.ts', 'b/big.ts', before, after, undefined, undefined, { context: 1 });

  const http: number[] = [];
  for (let run = 0; run < RUNS + 2; run += 1) {
    const ws = `bench-patch-${run}`;
    workspaces.create(ws);
    await workspaces.open(ws).commit([{ op: 'write', path: 'big.ts', content: new TextEncoder().encode(before) }]);
    const started = performance.now();
    const response = await fetch(`${url}/v1/workspaces/${ws}/tools/apply_patch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ patch: codexPatch }),
    });
    await response.text();
    if (response.status !== 200) throw new Error(`apply_patch failed with ${response.status}`);
    if (run >= 2) http.push(performance.now() - started);
  }

  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-git-'));
  const git: number[] = [];
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'change.diff'), unified);
    for (let run = 0; run < RUNS + 2; run += 1) {
      writeFileSync(join(dir, 'big.ts'), before);
      const started = performance.now();
      execFileSync('git', ['apply', 'change.diff'], { cwd: dir });
      if (run >= 2) git.push(performance.now() - started);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = median(http) / median(git);
  console.log(`apply_patch over HTTP : median ${median(http).toFixed(2)} ms (${RUNS} runs)`);
  console.log(`git apply on disk     : median ${median(git).toFixed(2)} ms (${RUNS} runs)`);
  console.log(
    `apply_patch / git apply wall time: ${ratio.toFixed(2)}x (target <= 1.0x: ${ratio <= 1 ? 'met' : 'NOT met'})`,
  );
}

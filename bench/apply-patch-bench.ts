// Benchmark: the 200-hunk / 5,000-line patch over HTTP vs `git apply` of the same change on disk (P2),
// and the stall patch: how long it takes to be refused and how late /healthz answers meanwhile.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import type { Workspaces } from '../src/workspace/workspaces.ts';
import { row, verdict } from './common.ts';

const RUNS = 15;
/**
 * Calls before the measured ones: a server runs for long, so P2 measures apply_patch once V8 has
 * compiled its hot paths (the first calls take about twice as long); git apply gets as many.
 */
const WARMUP = 20;

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
  for (let run = 0; run < RUNS + WARMUP; run += 1) {
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
    if (run >= WARMUP) http.push(performance.now() - started);
  }

  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-git-'));
  const git: number[] = [];
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(join(dir, 'change.diff'), unified);
    for (let run = 0; run < RUNS + WARMUP; run += 1) {
      writeFileSync(join(dir, 'big.ts'), before);
      const started = performance.now();
      execFileSync('git', ['apply', 'change.diff'], { cwd: dir });
      if (run >= WARMUP) git.push(performance.now() - started);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = median(http) / median(git);
  console.log(
    `apply_patch over HTTP : median ${median(http).toFixed(2)} ms (${RUNS} runs after ${WARMUP} warm-up calls)`,
  );
  console.log(
    `git apply on disk     : median ${median(git).toFixed(2)} ms (${RUNS} runs after ${WARMUP} warm-up runs)`,
  );
  row('P2', `apply_patch / git apply wall time: ${verdict(ratio, '<= 1.0x', ratio <= 1)}`);
  await benchStall(url, key, workspaces);
}

/**
 * The stall patch (test/tools/apply-patch/event-loop.test.ts builds the same): a 100,000-line file
 * repeating `ab`, `ab`, `cd`, and a 200 KB hunk of 50,000 context lines repeating them too but for
 * its last line, so that it nearly matches at every third line and matches nowhere. Its lines all
 * occur in the file, and its last (wrong) line is the common one: no choice of candidates avoids
 * comparing most of the hunk at ~16,000 places. Before the work budget it held the event loop
 * for about 37 s and answered an ordinary patch_conflict.
 */
function stallCase(): { file: string; patch: string } {
  const cycle = ['ab', 'ab', 'cd'];
  const lines = Array.from({ length: 100_000 }, (_, i) => cycle[i % 3]!);
  const context = lines.slice(1, 50_001);
  context[context.length - 1] = 'ab'; // where the file has `cd`
  return {
    file: `${lines.join('\n')}\n`,
    patch: [
      '*** Begin Patch',
      '*** Update File: stall.txt',
      '@@',
      ...context.map((line) => ` ${line}`),
      '*** End Patch',
      '',
    ].join('\n'),
  };
}

/** The stall patch over HTTP, with /healthz asked every 10 ms while it runs. */
async function benchStall(url: string, key: string, workspaces: Workspaces): Promise<void> {
  console.log(
    '\n# apply_patch: the stall patch (50,000 context lines that nearly match a 100,000-line file at every third line)',
  );
  const { file, patch } = stallCase();
  workspaces.create('bench-stall');
  await workspaces
    .open('bench-stall')
    .commit([{ op: 'write', path: 'stall.txt', content: new TextEncoder().encode(file) }]);
  let done = false;
  let worst = 0;
  let asked = 0;
  let failed = 0;
  // Each ask is due 10 ms after the previous answer; its latency counts from when it was due, so
  // that the time this process (which also runs the server) could not even send it counts too.
  const health = (async () => {
    while (!done) {
      const due = performance.now() + 10;
      await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        await (await fetch(`${url}/healthz`)).text();
      } catch {
        failed += 1; // a stalled server may drop a kept-alive connection: it counts at the time it took
      }
      worst = Math.max(worst, performance.now() - due);
      asked += 1;
    }
  })();
  const started = performance.now();
  const response = await fetch(`${url}/v1/workspaces/bench-stall/tools/apply_patch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ patch }),
  });
  const answer = (await response.json()) as { error?: { code?: string; details?: { reason?: string } } };
  const elapsed = performance.now() - started;
  done = true;
  await health;
  const code = answer.error?.code ?? `result (${response.status})`;
  const reason = answer.error?.details?.reason;
  console.log(`answer: ${response.status} ${code}${reason ? ` (reason ${reason})` : ''} in ${elapsed.toFixed(0)} ms`);
  console.log(`/healthz: asked ${asked} times while it ran (${failed} failed), worst ${worst.toFixed(1)} ms`);
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  row(
    'stall',
    `apply_patch stall patch answered ${reason ?? code} in ${elapsed.toFixed(0)} ms ` +
      `(target work_limit < 2000 ms: ${met(reason === 'work_limit' && elapsed < 2000)}), ` +
      `worst /healthz ${worst.toFixed(1)} ms (target < 100 ms: ${met(worst < 100)})`,
  );
}

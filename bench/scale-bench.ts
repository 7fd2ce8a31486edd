// Benchmark P7b (issue 22): tool calls a second of the Cloudflare home under wrangler dev with 50 keys
// over 50 workspaces against 1 key over 1 workspace, in the same run. Every key has a quota and a rate
// limit, so each call asks its key's object once (key/admit); with one key and one workspace, one object of each
// kind serves everything, and with 50 × 50 the calls spread over 50 workspace and 50 key objects.
import { interleaved, describe as describeLoad, load, perSecond, row, verdict } from './common.ts';
import type { LoadResult } from './load-client.ts';
import { createSpreadTenants } from '../test/support/spread-tenants.ts';
import { startWorkerHome } from './worker-bench.ts';

const TENANTS = 50;

export async function benchScale(key: string, durationMs: number): Promise<void> {
  console.log(
    '\n# P7b: read_file calls/s on the Cloudflare home (wrangler dev), 50 keys × 50 workspaces vs 1 key × 1 workspace',
  );
  const worker = await startWorkerHome(key);
  try {
    const admin = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const { workspaces, secrets } = await createSpreadTenants(worker.url, key, {
      count: TENANTS,
      prefix: 'scale-',
      seed: { path: 'f.txt', content: 'x'.repeat(1023) + '\n' },
    });
    const paths = workspaces.map((ws) => `/v1/workspaces/${ws}/tools/read_file`);
    const spec = (grid: { paths: string[]; secrets: string[] }, count?: number) => (ms: number) =>
      load({
        count,
        url: `${worker.url}${paths[0]}`,
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ path: 'f.txt' }),
        connections: 16,
        durationMs: ms,
        grid,
      });
    const measures = {
      one: spec({ paths: [paths[0]!], secrets: [secrets[0]!] }),
      spread: spec({ paths, secrets }),
    };
    // Warm: every workspace object holds a copy of every key (each pair once) before the measured rounds.
    await spec({ paths, secrets }, TENANTS * TENANTS)(120_000);
    await measures.one(1000);
    const results: Record<'one' | 'spread', LoadResult> = await interleaved(measures, durationMs * 2);
    console.log(`1 key × 1 workspace    : ${describeLoad(results.one, 'calls/s')}`);
    console.log(`50 keys × 50 workspaces: ${describeLoad(results.spread, 'calls/s')}`);
    const ratio = perSecond(results.spread) / perSecond(results.one);
    row(
      'P7b',
      `read_file calls/s, 50 keys × 50 workspaces vs 1 key × 1 workspace (wrangler dev): ${perSecond(results.spread).toFixed(0)} vs ${perSecond(results.one).toFixed(0)}, ${verdict(ratio, '>= 0.8x', ratio >= 0.8)}`,
    );
  } finally {
    await worker.stop();
  }
}

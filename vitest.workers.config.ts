// Test configuration for the Cloudflare storage drivers: their tests run inside workerd (Miniflare).
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';
import { longestFirst } from './test/support/longest-first.ts';

// Everything stays on loopback: no fetch of request.cf data, no Wrangler metrics.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: './test/workers/wrangler.toml' } })],
  test: {
    include: ['test/workers/**/*.test.ts'],
    // Two files at a time, not vitest's default of one fewer than the cores (one on a 2-core CI
    // machine: the files ran one after the other, each waiting about 3 s for its modules to load
    // into workerd): each file runs in its own workerd with its own storage, sharing nothing. The
    // sweep race (about 27 s in CI, most of the tests' time) first, the other files beside it.
    maxWorkers: 2,
    sequence: { sequencer: longestFirst(['test/workers/family-sweep.test.ts']) },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

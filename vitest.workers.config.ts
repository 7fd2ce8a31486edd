// Test configuration for the Cloudflare storage drivers: their tests run inside workerd (Miniflare).
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

// Everything stays on loopback: no fetch of request.cf data, no Wrangler metrics.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: './test/workers/wrangler.toml' } })],
  test: {
    include: ['test/workers/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

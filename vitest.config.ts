// Test configuration: every test file runs in its own process, servers are real processes.
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // These run inside workerd, under vitest.workers.config.ts.
    exclude: [...configDefaults.exclude, 'test/workers/**'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

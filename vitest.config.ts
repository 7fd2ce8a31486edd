// Test configuration: every test file runs in its own process, servers are real processes.
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // These run inside workerd, under vitest.workers.config.ts.
    exclude: [...configDefaults.exclude, 'test/workers/**'],
    pool: 'forks',
    // Two files at a time, not vitest's default of one fewer than the cores (one on a 2-core CI
    // machine): most of a file's time is spent waiting on the servers and runners it starts, and
    // tests share nothing but the host (processes they look for carry names unique to the run).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

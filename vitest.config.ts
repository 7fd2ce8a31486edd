// Test configuration: every test file runs in its own process, servers are real processes.
import { configDefaults, defineConfig } from 'vitest/config';
import { longestFirst } from './test/support/longest-first.ts';

/**
 * Files that run with no other file beside them, after the others (vitest.alone.config.ts):
 * apply_patch's event-loop test measures how late a 10 ms timer fires against a 100 ms bound, which
 * a busy neighbour's processes pushed past it in CI (112 and 127 ms, preempted, not held), and so
 * did a checkpoint diff's same bound (126 ms, once the longest files began first); the edge
 * engine's differential test keeps both cores busy with a runner's commands and the edge's threads.
 */
export const runAlone = [
  'test/tools/apply-patch/event-loop.test.ts',
  'test/history/checkpoint-diff-loop.test.ts',
  'test/tools/edge-bash/differential.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // These run inside workerd, under vitest.workers.config.ts; those in `runAlone` in the pass after this one.
    exclude: [...configDefaults.exclude, 'test/workers/**', ...runAlone],
    // The longest files (measured in CI, about 15-45 s each) first, so the pass ends on short ones.
    sequence: {
      sequencer: longestFirst([
        'test/http/blob-gc.test.ts',
        'test/cli/toolgate-cli.test.ts',
        'test/http/runner-failover.test.ts',
        'test/http/console.test.ts',
        'test/http/grep-differential.test.ts',
        'test/http/start.test.ts',
        'test/http/bash-limits.test.ts',
        'test/tools/tool-formats-types.test.ts',
        'test/http/tenancy-runner.test.ts',
        'test/http/runner-confinement.test.ts',
        'test/http/git-import.test.ts',
      ]),
    },
    // The servers the tests start run from one bundle of them made for the pass.
    globalSetup: ['test/support/server-bundle.ts'],
    // A failed test prints what the servers it had running wrote meanwhile.
    setupFiles: ['test/support/server-output-on-failure.ts'],
    pool: 'forks',
    // Two files at a time, not vitest's default of one fewer than the cores (one on a 2-core CI
    // machine): most of a file's time is spent waiting on the servers and runners it starts, and
    // tests share nothing but the host (processes they look for carry names unique to the run).
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

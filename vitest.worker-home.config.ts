// The HTTP integration tests again, against the Cloudflare home: each test file starts
// `npm run start:worker` (wrangler dev, workerd with R2 and Durable Objects, a runner attached).
import { configDefaults, defineConfig } from 'vitest/config';
import { longestFirst } from './test/support/longest-first.ts';

process.env.TOOLGATE_TEST_HOME = 'worker';

/**
 * Files that run with no other file beside them: durability's 200 concurrent writes sometimes met
 * "Your worker restarted mid-request" (wrangler's proxy, 503) while another file's wrangler dev
 * ran, never alone.
 */
export const aloneOnWorkerHome = ['test/http/durability.test.ts'];

export default defineConfig({
  test: {
    // Every HTTP test file runs on this home too, but for those below; a file whose cases mostly
    // run here skips its few others with `it.skipIf(testHome === 'worker')`, saying why.
    include: ['test/http/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      // What a runner does on its own host (its sandbox modes, limits, overlay, the confinement of
      // its copy) is the same runner code whatever home leases it the job: Node home only, which
      // keeps CI within its time.
      'test/http/bash-sandbox-modes.test.ts',
      'test/http/bash-sandbox.test.ts',
      'test/http/bash-limits.test.ts',
      'test/http/bash-overlay.test.ts',
      'test/http/runner-confinement.test.ts',
      // What a tool answers, compared case by case with a reference (Codex's apply_patch scenarios,
      // ripgrep, the MCP SDK's own answers), is the tools' code whatever home runs it: Node home
      // only. The Worker's own path for each (its objects, R2, the app in them) is in the files
      // that stay: apply-patch, grep (glob too), mcp.
      'test/http/apply-patch-scenarios.test.ts',
      'test/http/grep-differential.test.ts',
      'test/http/glob-differential.test.ts',
      'test/http/mcp-plain-calls.test.ts',
      // The /docs page in Chromium: the same static page from the same app; the Worker's
      // /openapi.json it renders is checked by openapi.test.ts on this home.
      'test/http/docs-page.test.ts',
      // The Node home's own ports and entry: its S3 object store, and `npm start` itself.
      'test/http/s3-home.test.ts',
      'test/http/start.test.ts',
      // The app in process on the Node drivers, with no server: there is no home to swap.
      'test/http/symlinks-and-binary.test.ts',
      // The app in process, so streams' listener counts can be read: no home to swap.
      'test/http/stream-release.test.ts',
      // The replay of answers recorded from the Node home; it skips itself here.
      'test/http/recorded-answers.test.ts',
      // Alone, in the pass after this one (vitest.worker-home-alone.config.ts).
      ...aloneOnWorkerHome,
    ],
    // The Worker is built once, and every server of the pass serves it, started by one bundle of
    // functions/start-worker.ts.
    globalSetup: ['test/support/worker-script.ts', 'test/support/server-bundle.ts'],
    // A failed test prints what the servers it had running wrote meanwhile.
    setupFiles: ['test/support/server-output-on-failure.ts'],
    // The longest files on this home (measured in CI, about 25-55 s each) first, so the pass ends on short ones.
    sequence: {
      sequencer: longestFirst([
        'test/http/archives.test.ts',
        'test/http/object-spread.test.ts',
        'test/http/usage.test.ts',
        'test/http/runner-failover.test.ts',
        'test/http/tenancy-runner.test.ts',
        'test/http/console.test.ts',
        'test/http/git-import.test.ts',
        'test/http/runner-uploads.test.ts',
        'test/http/fork.test.ts',
        'test/http/bash.test.ts',
      ]),
    },
    pool: 'forks',
    // wrangler dev and workerd per file, two files at a time (the machines have two cores).
    maxWorkers: 2,
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});

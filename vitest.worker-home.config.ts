// The HTTP integration tests again, against the Cloudflare home: each test file starts
// `npm run start:worker` (wrangler dev, workerd with R2 and Durable Objects, a runner attached).
import { defineConfig } from 'vitest/config';

process.env.TOOLGATE_TEST_HOME = 'worker';

export default defineConfig({
  test: {
    // What a runner does on its own host (its sandbox modes, limits, confinement of its copy) is
    // the same runner code whatever home leases it the job: those tests run on the Node home only
    // (bash-sandbox-modes, bash-limits, runner-confinement), which keeps CI within its time.
    include: [
      'test/http/conventions.test.ts',
      'test/http/workspaces.test.ts',
      'test/http/file-tools.test.ts',
      'test/http/apply-patch.test.ts',
      'test/http/apply-patch-scenarios.test.ts',
      'test/http/bash.test.ts',
      'test/http/bash-live-control.test.ts',
      'test/http/bash-sandbox.test.ts',
      'test/http/keys.test.ts',
      'test/http/approvals.test.ts',
      'test/http/usage.test.ts',
      'test/http/runner-key.test.ts',
      'test/http/runner-failover.test.ts',
      'test/http/durability.test.ts',
      'test/http/apply-patch-crash.test.ts',
      'test/http/mcp.test.ts',
      'test/http/openapi.test.ts',
      'test/http/history.test.ts',
      'test/http/git-import.test.ts',
      'test/http/egress.test.ts',
      'test/http/hooks.test.ts',
      'test/http/secrets-at-rest.test.ts',
      'test/http/tenancy.test.ts',
      'test/http/tenancy-runner.test.ts',
      'test/http/tenancy-admin.test.ts',
      'test/http/runner-uploads.test.ts',
      'test/http/runner-fairness.test.ts',
      'test/http/process-quota.test.ts',
    ],
    pool: 'forks',
    // wrangler dev and workerd per file, one file at a time: with two at once, durability's 200
    // concurrent writes sometimes met "Your worker restarted mid-request" (wrangler's proxy, 503)
    // in a full run, never alone; one at a time costs about three minutes more.
    maxWorkers: 1,
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});

// Global set-up of the passes that start servers: the Node server (functions/node.ts), the Cloudflare
// home's starter (functions/start-worker.ts), the runner (functions/runner.ts, what `toolgate runner`
// runs) and the server's two kinds of threads are bundled once
// by esbuild, packages left to node_modules, and every server of the pass runs that bundle with plain
// node instead of compiling about 200 TypeScript modules through tsx's loader at each start (about
// 1.5 s of CPU a start of the Node server, and most of its start-up time). It is the same program:
// `npm start` itself is started by test/http/start.test.ts, and worker-bundle.test.ts starts
// start-worker.ts from its source.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { repoRoot } from './server-process.ts';

/** Builds the bundles into a new folder and answers it (its `node.js`, `start-worker.js` and `runner.js`). */
export async function bundleServers(): Promise<string> {
  // Inside the checkout, so the bundles' imports of packages resolve to its node_modules.
  mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true });
  const outdir = mkdtempSync(join(repoRoot, 'test-artifacts', 'servers-'));
  await build({
    entryPoints: {
      node: join(repoRoot, 'functions/node.ts'),
      'start-worker': join(repoRoot, 'functions/start-worker.ts'),
      runner: join(repoRoot, 'functions/runner.ts'),
      // The names the thread pools start, beside the server's script (src/node/*-threads.ts).
      'search-thread-entry': join(repoRoot, 'src/node/search-thread.ts'),
      'edge-thread-entry': join(repoRoot, 'src/node/edge-thread.ts'),
    },
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
  return outdir;
}

export async function setup(): Promise<() => void> {
  const outdir = await bundleServers();
  // Test files' processes are started after this, and inherit it.
  process.env.TOOLGATE_TEST_SERVERS = outdir;
  return () => rmSync(outdir, { recursive: true, force: true });
}

// Global set-up of the worker-home passes: the Worker is built once, as `wrangler deploy` builds it,
// and every server they start serves that script (TOOLGATE_WORKER_SCRIPT) rather than building its
// own: each start is cheaper, and an edit to a source while the tests run restarts nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorkerScript } from '../../functions/build-worker.ts';

export async function setup(): Promise<() => void> {
  const outdir = mkdtempSync(join(tmpdir(), 'toolgate-worker-script-'));
  // Test files' processes are started after this, and inherit it.
  process.env.TOOLGATE_WORKER_SCRIPT = await buildWorkerScript(outdir);
  return () => rmSync(outdir, { recursive: true, force: true });
}

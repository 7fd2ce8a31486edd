// `npm run build:worker [dir]`: builds the Worker as `wrangler deploy` builds it (`--dry-run
// --outdir`, default dist/worker) and prints the script's path, which `TOOLGATE_WORKER_SCRIPT`
// then names: `npm run start:worker` serves it as it is, building and watching nothing.
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isEntryPoint } from '../src/node/entry-point.ts';
import { wranglerEnv } from './wrangler-env.ts';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

/** Builds the Worker into `outdir` and answers the path of its script (`worker.js`). */
export async function buildWorkerScript(outdir: string): Promise<string> {
  const wrangler = join(repoRoot, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', outdir], {
    cwd: repoRoot,
    env: { ...process.env, ...wranglerEnv },
    maxBuffer: 16 * 1024 * 1024,
  });
  return join(outdir, 'worker.js');
}

export async function main(): Promise<void> {
  const script = await buildWorkerScript(resolve(process.argv[2] ?? join(repoRoot, 'dist', 'worker')));
  console.log(script);
  console.error(`serve it: TOOLGATE_WORKER_SCRIPT=${script} npm run start:worker`);
}

if (isEntryPoint(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`toolgate: could not build the Worker: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}

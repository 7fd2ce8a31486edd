// The Worker bundle, built as `wrangler deploy` builds it, holds no Node-only module and fits Cloudflare's size limit.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './support/server-process.ts';
import { buildWorkerScript } from '../functions/build-worker.ts';

const outdir = mkdtempSync(join(tmpdir(), 'toolgate-bundle-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('wrangler deploy --dry-run', () => {
  it('bundles functions/worker.ts without child processes, better-sqlite3, the fs store or the runner', async () => {
    await buildWorkerScript(outdir);
    const bundles = readdirSync(outdir).filter((name) => name.endsWith('.js'));
    expect(bundles.length).toBeGreaterThan(0);
    const code = bundles.map((name) => readFileSync(join(outdir, name), 'utf8')).join('\n');
    // The app is in it...
    for (const name of ['WorkspaceObject', 'DirectoryObject', 'DispatcherObject']) expect(code).toContain(name);
    expect(code).toContain('apply_patch');
    // ...and nothing that only runs on Node: the runner's bubblewrap code is found by its arguments
    // (the word "bwrap" itself is a value of TOOLGATE_SANDBOX, which the Worker reads for /healthz).
    // bash's edge engine (just-bash) is in it, evaluated on first use, and the whole stays within
    // Cloudflare's limit for a Worker on the Free plan: 3 MB after gzip (the Paid plans' is 10 MB).
    expect(code).toContain('InMemoryFs');
    const gzipped = gzipSync(Buffer.from(code)).byteLength;
    console.log(`Worker bundle: ${Math.round(code.length / 1024)} KiB, ${Math.round(gzipped / 1024)} KiB gzipped`);
    expect(gzipped).toBeLessThan(3 * 1000 * 1000);
    for (const forbidden of [
      'node:child_process',
      // As a module name: the edge interpreter's defence-in-depth names it in a message.
      '"child_process"',
      'better-sqlite3',
      'node:fs',
      'FsObjectStore',
      'SqliteDatabase',
      '--die-with-parent',
      'locateBubblewrap',
      'S3Client',
    ]) {
      expect({ forbidden, found: code.includes(forbidden) }).toEqual({ forbidden, found: false });
    }
  });

  it('is what `npm run start:worker` serves under TOOLGATE_WORKER_SCRIPT, and a script that is not there stops it naming it', async () => {
    // The worker-home passes serve the built script (test/support/worker-script.ts); here, a wrong name.
    const missing = join(outdir, 'not-built.js');
    const started = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'functions/start-worker.ts'], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PORT: '0',
        TOOLGATE_DATA: join(outdir, 'data'),
        TOOLGATE_API_KEY: 'tg_test_admin_key_0123456789abcdef',
        TOOLGATE_WORKER_SCRIPT: missing,
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(started.code).toBe(1);
    expect(started.stderr).toContain(`TOOLGATE_WORKER_SCRIPT names ${missing}, which does not exist`);
  });
});

// The runner's data directory, private to its owner. The runner is a separate program that
// speaks only the runner protocol, so it keeps this small Node-only helper of its own rather
// than import the server's storage/node/private-files.ts across the layers.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

const PRIVATE_DIR_MODE = 0o700;

/**
 * Makes `dir` private to its owner: created 0700 (missing parents get the usual mode), or
 * tightened with chmod when it exists wider; every later lookup through it checks its new mode.
 */
export function makePrivateDir(dir: string): void {
  mkdirSync(dirname(dir), { recursive: true });
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stats = statSync(dir);
  if (!stats.isDirectory()) throw new Error(`${dir} exists and is not a directory.`);
  if ((stats.mode & 0o077) !== 0) chmodSync(dir, PRIVATE_DIR_MODE);
}

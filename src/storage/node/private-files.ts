// On-disk data of the Node homes and of runners: directories 0700 and secret-holding files 0600, created so.
import { chmodSync, closeSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Makes `dir` private to its owner: created 0700 (missing parents get the usual mode), or
 * tightened with chmod when it exists wider. A directory can be tightened after the fact, since
 * every later lookup through it checks its new mode; a file cannot, since whoever opened it
 * while it was wider keeps the open file, so files are created with their final mode instead.
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

/**
 * Replaces `file` with `content` through a temp file created 0600 beside it and renamed over it,
 * so the secret is never in a file anyone else may open, and readers never see half of it.
 */
export function writePrivateFile(file: string, content: string): void {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    writeFileSync(fd, content);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  closeSync(fd);
  renameSync(temp, file);
}

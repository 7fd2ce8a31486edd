// Where a separate runner's key comes from: TOOLGATE_RUNNER_KEY or a key file, and --key only with a warning.
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';

export interface RunnerKeySources {
  /** `--key`: works, but any user of the host can read a process's arguments. */
  flag?: string | undefined;
  /** `--key-file`. */
  file?: string | undefined;
  /** TOOLGATE_RUNNER_KEY. */
  env?: string | undefined;
}

export interface RunnerKey {
  key: string;
  /** Said on stderr at start: how the key was given is unsafe. */
  warning?: string;
}

/** A key source that cannot be used; its message says what to change. */
export class RunnerKeyError extends Error {}

export const ARGV_KEY_WARNING =
  'a key given with --key is visible to every user of this host (ps, /proc/<pid>/cmdline); pass it in TOOLGATE_RUNNER_KEY or --key-file instead';

/**
 * The key, from exactly one of --key and --key-file, else from TOOLGATE_RUNNER_KEY; a flag wins
 * over the variable, as the more specific of the two.
 */
export function readRunnerKey(sources: RunnerKeySources): RunnerKey {
  if (sources.flag !== undefined && sources.file !== undefined)
    throw new RunnerKeyError('give --key-file or --key, not both');
  if (sources.file !== undefined) return { key: readKeyFile(sources.file) };
  if (sources.flag !== undefined) {
    if (sources.flag.trim() === '') throw new RunnerKeyError('--key is empty');
    return { key: sources.flag.trim(), warning: ARGV_KEY_WARNING };
  }
  const fromEnv = sources.env?.trim();
  if (!fromEnv) throw new RunnerKeyError('a runner key is required: set TOOLGATE_RUNNER_KEY or pass --key-file <path>');
  return { key: fromEnv };
}

/**
 * Reads a key file, refusing one that group or others may access, as ssh refuses such a private
 * key: a key anyone on the host can read is no secret. Mode and bytes come from one open file, so
 * the file checked is the file read.
 */
export function readKeyFile(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new RunnerKeyError(
      `cannot read the key file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new RunnerKeyError(`the key file ${path} is not a regular file`);
    const mode = stats.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new RunnerKeyError(
        `the key file ${path} has mode ${mode.toString(8).padStart(4, '0')}, so other users may read it; run chmod 600 ${path}`,
      );
    }
    const key = readFileSync(fd, 'utf8').trim();
    if (key === '') throw new RunnerKeyError(`the key file ${path} is empty`);
    return key;
  } finally {
    closeSync(fd);
  }
}

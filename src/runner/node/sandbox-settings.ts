// The settings of how a runner confines commands (TOOLGATE_SANDBOX, TOOLGATE_RUNNER_UID, the per-process limits), read from the environment.

export interface ProcessLimits {
  /** Memory of one process and all it starts, in MiB (TOOLGATE_PROCESS_MEMORY_MB). */
  memoryMb: number;
  /** Processes and threads one command may have at once (TOOLGATE_PROCESS_PIDS). */
  pids: number;
  /** How long a started process may run before it is stopped (TOOLGATE_MAX_PROCESS_MS); exec has its own timeoutMs. */
  maxProcessMs: number;
}

export interface SandboxSettings {
  /** 'bwrap': commands run only in bubblewrap; 'none': unsandboxed in their own process group, on purpose (TOOLGATE_SANDBOX). */
  mode: 'bwrap' | 'none';
  /** The bubblewrap binary (TOOLGATE_BWRAP_PATH); unset: /usr/bin/bwrap, else `bwrap` on PATH. */
  bwrapPath: string | undefined;
  /** The uid and gid commands run as when the runner runs as root (TOOLGATE_RUNNER_UID). */
  commandUid: number;
  limits: ProcessLimits;
}

export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = {
  mode: 'bwrap',
  bwrapPath: undefined,
  commandUid: 65534,
  limits: { memoryMb: 2048, pids: 512, maxProcessMs: 3_600_000 },
};

/** Reads the settings; throws an Error naming the variable when one is malformed. */
export function readSandboxSettings(env: Record<string, string | undefined>): SandboxSettings {
  const mode = env.TOOLGATE_SANDBOX || 'bwrap';
  if (mode !== 'bwrap' && mode !== 'none') throw new Error(`TOOLGATE_SANDBOX must be "bwrap" or "none"; it is ${JSON.stringify(mode)}.`);
  const bwrapPath = env.TOOLGATE_BWRAP_PATH || undefined;
  if (bwrapPath !== undefined && !bwrapPath.startsWith('/')) throw new Error(`TOOLGATE_BWRAP_PATH must be an absolute path; it is ${JSON.stringify(bwrapPath)}.`);
  const defaults = DEFAULT_SANDBOX_SETTINGS;
  return {
    mode,
    bwrapPath,
    // 0 would be the root the runner runs as: exactly what the uid is there to avoid.
    commandUid: integer(env, 'TOOLGATE_RUNNER_UID', defaults.commandUid, 1, 2 ** 31 - 2),
    limits: {
      memoryMb: integer(env, 'TOOLGATE_PROCESS_MEMORY_MB', defaults.limits.memoryMb, 16, 1024 * 1024),
      pids: integer(env, 'TOOLGATE_PROCESS_PIDS', defaults.limits.pids, 8, 4_194_304),
      maxProcessMs: integer(env, 'TOOLGATE_MAX_PROCESS_MS', defaults.limits.maxProcessMs, 1000, 30 * 24 * 3_600_000),
    },
  };
}

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max}; it is ${JSON.stringify(raw)}.`);
  return value;
}

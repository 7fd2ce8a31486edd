// The settings of how a runner confines commands (TOOLGATE_SANDBOX, TOOLGATE_RUNNER_UID, the per-process limits), read from the environment.
import { readSetting } from '../../contract/settings.ts';

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

/** Reads the settings (the one table's parsers and defaults, as a runner reads them); throws an Error naming the variable when one is malformed. */
export function readSandboxSettings(env: Record<string, string | undefined>): SandboxSettings {
  const read = <N extends SandboxSettingName>(name: N) => readSetting(env, name, 'runner');
  return {
    mode: read('TOOLGATE_SANDBOX'),
    bwrapPath: read('TOOLGATE_BWRAP_PATH'),
    commandUid: read('TOOLGATE_RUNNER_UID'),
    limits: {
      memoryMb: read('TOOLGATE_PROCESS_MEMORY_MB'),
      pids: read('TOOLGATE_PROCESS_PIDS'),
      maxProcessMs: read('TOOLGATE_MAX_PROCESS_MS'),
    },
  };
}

type SandboxSettingName =
  | 'TOOLGATE_SANDBOX'
  | 'TOOLGATE_BWRAP_PATH'
  | 'TOOLGATE_RUNNER_UID'
  | 'TOOLGATE_PROCESS_MEMORY_MB'
  | 'TOOLGATE_PROCESS_PIDS'
  | 'TOOLGATE_MAX_PROCESS_MS';

/** The settings with nothing set: the table's defaults. */
export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = readSandboxSettings({});

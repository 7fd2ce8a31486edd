// Configuration of the Node home, read from environment variables through the settings table.
import { resolve } from 'node:path';
import { readServerSettings, type ServerSettings } from '../contract/server-settings.ts';
import { readSetting, type SettingName } from '../contract/settings.ts';
import { readSandboxSettings, type SandboxSettings } from '../runner/node/sandbox-settings.ts';
import type { ReadOnlyRoot } from '../workspace/workspaces.ts';

export interface NodeConfig extends ServerSettings {
  host: string;
  port: number;
  dataDir: string;
  /** The bootstrap admin key; generated and kept in the data dir when unset. */
  apiKey: string | undefined;
  /** Worker threads bash's edge engine runs commands on (TOOLGATE_EDGE_THREADS). */
  edgeThreads: number;
  readOnlyRoots: ReadOnlyRoot[];
  /** Run a runner inside the server process (TOOLGATE_RUNNER, default on; `off` to run runners separately). */
  inProcessRunner: boolean;
  /** How long a blob journal waits before its contents move to their files (TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS; tests). */
  blobJournalMoveDelayMs: number;
  /** Commands may use the network (TOOLGATE_RUNNER_NETWORK=on); off by default. */
  runnerNetwork: boolean;
  /** exec jobs of the in-process runner run over an overlay where the host can mount one (TOOLGATE_RUNNER_OVERLAY, default on). */
  runnerOverlay: boolean;
  /** How the in-process or attached runner confines commands: TOOLGATE_SANDBOX, TOOLGATE_BWRAP_PATH, TOOLGATE_RUNNER_UID, TOOLGATE_PROCESS_*, TOOLGATE_MAX_PROCESS_MS. */
  sandbox: SandboxSettings;
  /** Variables the S3 driver reads (TOOLGATE_S3_*, AWS_*), passed through. */
  env: Record<string, string | undefined>;
}

export const MiB = 1024 * 1024;

export function readNodeConfig(env: Record<string, string | undefined>): NodeConfig {
  const read = <N extends SettingName>(name: N) => readSetting(env, name, 'node');
  return {
    ...readServerSettings(env, 'node'),
    host: read('HOST'),
    port: read('PORT'),
    dataDir: resolve(read('TOOLGATE_DATA')),
    apiKey: read('TOOLGATE_API_KEY'),
    edgeThreads: read('TOOLGATE_EDGE_THREADS'),
    readOnlyRoots: read('TOOLGATE_READ_ONLY_ROOTS'),
    inProcessRunner: read('TOOLGATE_RUNNER'),
    runnerNetwork: read('TOOLGATE_RUNNER_NETWORK'),
    runnerOverlay: read('TOOLGATE_RUNNER_OVERLAY'),
    // The in-process runner's sandbox, read as any runner reads it.
    sandbox: readSandboxSettings(env),
    blobJournalMoveDelayMs: read('TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS'),
    env,
  };
}

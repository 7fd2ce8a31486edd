// Configuration of the Node home, read from environment variables through the settings table.
import { resolve } from 'node:path';
import { readSetting, type SettingName } from '../contract/settings.ts';
import type { EgressAllowList } from '../core/egress-policy.ts';
import { readSandboxSettings, type SandboxSettings } from '../runner/node/sandbox-settings.ts';
import type { ReadOnlyRoot } from '../workspace/workspaces.ts';

export interface NodeConfig {
  host: string;
  port: number;
  dataDir: string;
  /** The bootstrap admin key; generated and kept in the data dir when unset. */
  apiKey: string | undefined;
  maxBodyBytes: number;
  maxFileBytes: number;
  defaultReadMaxChars: number;
  /** The most file contents one edge command may hold in memory (TOOLGATE_EDGE_MEMORY_BYTES). */
  edgeMemoryBytes: number;
  /** Worker threads bash's edge engine runs commands on (TOOLGATE_EDGE_THREADS). */
  edgeThreads: number;
  readOnlyRoots: ReadOnlyRoot[];
  /** Run a runner inside the server process (TOOLGATE_RUNNER, default on; `off` to run runners separately). */
  inProcessRunner: boolean;
  leaseMs: number;
  /** Processes of one workspace that run at once (TOOLGATE_WORKSPACE_MAX_PROCESSES); more wait queued. */
  workspaceMaxProcesses: number;
  maxProcessOutputChars: number;
  /** How long a blob journal waits before its contents move to their files (TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS; tests). */
  blobJournalMoveDelayMs: number;
  /** Commands may use the network (TOOLGATE_RUNNER_NETWORK=on); off by default. */
  runnerNetwork: boolean;
  /** exec jobs of the in-process runner run over an overlay where the host can mount one (TOOLGATE_RUNNER_OVERLAY, default on). */
  runnerOverlay: boolean;
  /** How the in-process or attached runner confines commands: TOOLGATE_SANDBOX, TOOLGATE_BWRAP_PATH, TOOLGATE_RUNNER_UID, TOOLGATE_PROCESS_*, TOOLGATE_MAX_PROCESS_MS. */
  sandbox: SandboxSettings;
  /** How long a call may wait for approval before it is rejected as expired. */
  approvalTtlMs: number;
  /** How long an event stream stays quiet before a keep-alive comment. */
  streamKeepAliveMs: number;
  /** Unreferenced contents are deleted after this long (TOOLGATE_BLOB_GC_GRACE_MS), swept this often (TOOLGATE_BLOB_GC_INTERVAL_MS). */
  blobGc: { graceMs: number; intervalMs: number };
  /** How often running processes' seconds count against processSeconds quotas (TOOLGATE_PROCESS_ACCRUAL_MS). */
  processAccrualMs: number;
  /** Tool calls a minute per key, for keys without their own limit; 0 = unlimited. */
  rateLimitPerMinute: number;
  /** Bounds of one git import: files, bytes of content (and of the pack), and time (TOOLGATE_IMPORT_*). */
  importLimits: { maxFiles: number; maxBytes: number; timeoutMs: number };
  /** Hosts, addresses and ranges imports and notices may reach although the egress rule refuses them (TOOLGATE_EGRESS_ALLOW_HOSTS). */
  egressAllowHosts: EgressAllowList;
  /** Variables the S3 driver reads (TOOLGATE_S3_*, AWS_*), passed through. */
  env: Record<string, string | undefined>;
}

export const MiB = 1024 * 1024;

export function readNodeConfig(env: Record<string, string | undefined>): NodeConfig {
  const read = <N extends SettingName>(name: N) => readSetting(env, name, 'node');
  return {
    host: read('HOST'),
    port: read('PORT'),
    dataDir: resolve(read('TOOLGATE_DATA')),
    apiKey: read('TOOLGATE_API_KEY'),
    maxBodyBytes: read('TOOLGATE_MAX_BODY_BYTES'),
    maxFileBytes: read('TOOLGATE_MAX_FILE_BYTES'),
    defaultReadMaxChars: read('TOOLGATE_DEFAULT_READ_MAX_CHARS'),
    edgeMemoryBytes: read('TOOLGATE_EDGE_MEMORY_BYTES'),
    edgeThreads: read('TOOLGATE_EDGE_THREADS'),
    readOnlyRoots: read('TOOLGATE_READ_ONLY_ROOTS'),
    inProcessRunner: read('TOOLGATE_RUNNER'),
    leaseMs: read('TOOLGATE_LEASE_MS'),
    workspaceMaxProcesses: read('TOOLGATE_WORKSPACE_MAX_PROCESSES'),
    maxProcessOutputChars: read('TOOLGATE_MAX_PROCESS_OUTPUT_CHARS'),
    runnerNetwork: read('TOOLGATE_RUNNER_NETWORK'),
    runnerOverlay: read('TOOLGATE_RUNNER_OVERLAY'),
    // The in-process runner's sandbox, read as any runner reads it.
    sandbox: readSandboxSettings(env),
    approvalTtlMs: read('TOOLGATE_APPROVAL_TTL_MS'),
    streamKeepAliveMs: read('TOOLGATE_STREAM_KEEPALIVE_MS'),
    blobGc: { graceMs: read('TOOLGATE_BLOB_GC_GRACE_MS'), intervalMs: read('TOOLGATE_BLOB_GC_INTERVAL_MS') },
    blobJournalMoveDelayMs: read('TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS'),
    processAccrualMs: read('TOOLGATE_PROCESS_ACCRUAL_MS'),
    rateLimitPerMinute: read('TOOLGATE_RATE_LIMIT_PER_MINUTE'),
    importLimits: {
      maxFiles: read('TOOLGATE_IMPORT_MAX_FILES'),
      maxBytes: read('TOOLGATE_IMPORT_MAX_BYTES'),
      timeoutMs: read('TOOLGATE_IMPORT_TIMEOUT_MS'),
    },
    egressAllowHosts: read('TOOLGATE_EGRESS_ALLOW_HOSTS'),
    env,
  };
}

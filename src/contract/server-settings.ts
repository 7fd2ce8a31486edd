// The settings both servers read alike (the Node home and the Cloudflare home's objects), read
// once here so that each home adds only what is its own.
import type { EgressAllowList } from '../core/egress-policy.ts';
import { readSetting, type SettingName, type SettingsSource } from './settings.ts';

export interface ServerSettings {
  maxBodyBytes: number;
  maxFileBytes: number;
  defaultReadMaxChars: number;
  /** The most file contents one edge command may hold in memory (TOOLGATE_EDGE_MEMORY_BYTES). */
  edgeMemoryBytes: number;
  leaseMs: number;
  /** Processes of one workspace that run at once (TOOLGATE_WORKSPACE_MAX_PROCESSES); more wait queued. */
  workspaceMaxProcesses: number;
  /** The characters of output a process's log keeps, its last ones (TOOLGATE_MAX_PROCESS_OUTPUT_CHARS). */
  maxProcessOutputChars: number;
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
}

/** The settings of `home` both servers share; a malformed value throws an Error naming its variable. */
export function readServerSettings(env: SettingsSource, home: 'node' | 'cloudflare'): ServerSettings {
  const read = <N extends SettingName>(name: N) => readSetting(env, name, home);
  return {
    maxBodyBytes: read('TOOLGATE_MAX_BODY_BYTES'),
    maxFileBytes: read('TOOLGATE_MAX_FILE_BYTES'),
    defaultReadMaxChars: read('TOOLGATE_DEFAULT_READ_MAX_CHARS'),
    edgeMemoryBytes: read('TOOLGATE_EDGE_MEMORY_BYTES'),
    leaseMs: read('TOOLGATE_LEASE_MS'),
    workspaceMaxProcesses: read('TOOLGATE_WORKSPACE_MAX_PROCESSES'),
    maxProcessOutputChars: read('TOOLGATE_MAX_PROCESS_OUTPUT_CHARS'),
    approvalTtlMs: read('TOOLGATE_APPROVAL_TTL_MS'),
    streamKeepAliveMs: read('TOOLGATE_STREAM_KEEPALIVE_MS'),
    blobGc: { graceMs: read('TOOLGATE_BLOB_GC_GRACE_MS'), intervalMs: read('TOOLGATE_BLOB_GC_INTERVAL_MS') },
    processAccrualMs: read('TOOLGATE_PROCESS_ACCRUAL_MS'),
    rateLimitPerMinute: read('TOOLGATE_RATE_LIMIT_PER_MINUTE'),
    importLimits: {
      maxFiles: read('TOOLGATE_IMPORT_MAX_FILES'),
      maxBytes: read('TOOLGATE_IMPORT_MAX_BYTES'),
      timeoutMs: read('TOOLGATE_IMPORT_TIMEOUT_MS'),
    },
    egressAllowHosts: read('TOOLGATE_EGRESS_ALLOW_HOSTS'),
  };
}

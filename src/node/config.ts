// Configuration of the Node home, read from environment variables with clear errors.
import { resolve } from 'node:path';
import { parseEgressAllowList, type EgressAllowList } from '../core/egress-policy.ts';
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
  readOnlyRoots: ReadOnlyRoot[];
  /** Run a runner inside the server process (TOOLGATE_RUNNER, default on; `off` to run runners separately). */
  inProcessRunner: boolean;
  leaseMs: number;
  /** Processes of one workspace that run at once (TOOLGATE_WORKSPACE_MAX_PROCESSES); more wait queued. */
  workspaceMaxProcesses: number;
  maxProcessOutputChars: number;
  /** Commands may use the network (TOOLGATE_RUNNER_NETWORK=on); off by default. */
  runnerNetwork: boolean;
  /** exec jobs of the in-process runner run over an overlay where the host can mount one (TOOLGATE_RUNNER_OVERLAY, default on). */
  runnerOverlay: boolean;
  /** How the in-process or attached runner confines commands: TOOLGATE_SANDBOX, TOOLGATE_BWRAP_PATH, TOOLGATE_RUNNER_UID, TOOLGATE_PROCESS_*, TOOLGATE_MAX_PROCESS_MS. */
  sandbox: SandboxSettings;
  /** How long a call may wait for approval before it is rejected as expired. */
  approvalTtlMs: number;
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
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8787, 0, 65535),
    dataDir: resolve(env.TOOLGATE_DATA || '.toolgate'),
    apiKey: env.TOOLGATE_API_KEY || undefined,
    maxBodyBytes: integer(env, 'TOOLGATE_MAX_BODY_BYTES', 10 * MiB, 1, 2 ** 31),
    maxFileBytes: integer(env, 'TOOLGATE_MAX_FILE_BYTES', 32 * MiB, 1, 2 ** 31),
    defaultReadMaxChars: integer(env, 'TOOLGATE_DEFAULT_READ_MAX_CHARS', 20_000, 1, 2 ** 31),
    readOnlyRoots: readOnlyRoots(env.TOOLGATE_READ_ONLY_ROOTS),
    inProcessRunner: onOff(env, 'TOOLGATE_RUNNER', true),
    leaseMs: integer(env, 'TOOLGATE_LEASE_MS', 15_000, 1000, 3_600_000),
    workspaceMaxProcesses: integer(env, 'TOOLGATE_WORKSPACE_MAX_PROCESSES', 4, 1, 10_000),
    maxProcessOutputChars: integer(env, 'TOOLGATE_MAX_PROCESS_OUTPUT_CHARS', 1_048_576, 1024, 2 ** 30),
    runnerNetwork: onOff(env, 'TOOLGATE_RUNNER_NETWORK', false),
    runnerOverlay: onOff(env, 'TOOLGATE_RUNNER_OVERLAY', true),
    sandbox: readSandboxSettings(env),
    approvalTtlMs: integer(env, 'TOOLGATE_APPROVAL_TTL_MS', 3_600_000, 1000, 30 * 24 * 3_600_000),
    processAccrualMs: integer(env, 'TOOLGATE_PROCESS_ACCRUAL_MS', 10_000, 100, 30_000),
    rateLimitPerMinute: integer(env, 'TOOLGATE_RATE_LIMIT_PER_MINUTE', 0, 0, 1_000_000),
    importLimits: {
      maxFiles: integer(env, 'TOOLGATE_IMPORT_MAX_FILES', 10_000, 1, 1_000_000),
      maxBytes: integer(env, 'TOOLGATE_IMPORT_MAX_BYTES', 32 * MiB, 1, 2 ** 31),
      timeoutMs: integer(env, 'TOOLGATE_IMPORT_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    },
    egressAllowHosts: parseEgressAllowList(env.TOOLGATE_EGRESS_ALLOW_HOSTS),
    env,
  };
}

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}; it is ${JSON.stringify(raw)}.`);
  }
  return value;
}

function onOff(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw)) return true;
  if (['off', 'false', '0'].includes(raw)) return false;
  throw new Error(`${name} must be "on" or "off"; it is ${JSON.stringify(raw)}.`);
}

/** `TOOLGATE_READ_ONLY_ROOTS=".skills=skills,docs=handbook"`: mount path = source workspace. */
function readOnlyRoots(raw: string | undefined): ReadOnlyRoot[] {
  if (!raw) return [];
  return raw.split(',').map((pair) => {
    const [path, workspace, extra] = pair.split('=').map((part) => part.trim());
    if (!path || !workspace || extra !== undefined) {
      throw new Error(`TOOLGATE_READ_ONLY_ROOTS entries look like "path=workspace"; ${JSON.stringify(pair)} does not.`);
    }
    return { path, workspace };
  });
}

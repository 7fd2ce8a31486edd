// The one table of settings: every environment variable a toolgate program reads, its default,
// what it means, which programs read it, and how its text becomes a value.
import { parseEgressAllowList, type EgressAllowList } from '../core/egress-policy.ts';
import {
  DAY_MS,
  integer,
  isUnset,
  MiB,
  onOff,
  parseReadOnlyRoots,
  text,
  type ReadOnlyRootSetting,
  type Setting,
  type SettingsHome,
} from './setting-kinds.ts';

export { settingsHomes, type ReadOnlyRootSetting, type Setting, type SettingsHome } from './setting-kinds.ts';

/** Environment variables, or a Worker's `env`; an empty string counts as unset. */
export type SettingsSource = { readonly [N in SettingName]?: string | undefined };

const server = ['node', 'cloudflare'] as const;
const serverAndDev = ['node', 'worker-dev'] as const;
/** Who confines commands: the in-process runner, the runner `npm run start:worker` attaches, and `toolgate runner`. */
const runners = ['node', 'worker-dev', 'runner'] as const;

export const settings = {
  HOST: text({
    fallback: '127.0.0.1',
    defaultText: '`127.0.0.1`',
    valuesText: 'an address',
    meaning: 'address to listen on',
    homes: serverAndDev,
  }),
  PORT: integer({
    name: 'PORT',
    fallback: 8787,
    min: 0,
    max: 65535,
    meaning: 'port to listen on (`0` picks a free one; the server prints it)',
    homes: serverAndDev,
  }),
  TOOLGATE_DATA: text({
    fallback: '.toolgate',
    defaultText: '`./.toolgate`',
    valuesText: 'a directory',
    meaning:
      "data directory, kept 0700: `toolgate.db` (SQLite), `blobs/`, `admin-key`, the in-process runner's `runner/`; under `npm run start:worker` also `worker.env` and `wrangler/` (the emulated Durable Objects and R2)",
    homes: serverAndDev,
  }),
  TOOLGATE_API_KEY: text({
    fallback: undefined,
    defaultText: 'generated (Node); required (Cloudflare)',
    valuesText: 'a secret',
    meaning:
      'the first admin key (role admin, approval mode auto); when unset, `npm start` generates one, prints it once and keeps it in `admin-key`. On Cloudflare a secret (`wrangler secret put TOOLGATE_API_KEY`). The `keys` and `call` commands send it when `--key` is not given',
    homes: ['node', 'worker-dev', 'cloudflare', 'cli'],
  }),
  TOOLGATE_URL: text({
    fallback: 'http://127.0.0.1:8787',
    defaultText: '`http://127.0.0.1:8787`',
    valuesText: 'a URL',
    meaning: 'the server the `keys` and `call` commands reach when `--url` is not given',
    homes: ['cli'],
  }),
  TOOLGATE_MAX_BODY_BYTES: integer({
    name: 'TOOLGATE_MAX_BODY_BYTES',
    fallback: 10 * MiB,
    fallbackNote: '10 MiB',
    min: 1,
    max: 2 ** 31,
    // Cloudflare refuses request bodies over 100 MB before the Worker sees them.
    cloudflareMax: 100 * 1000 * 1000,
    meaning:
      'largest request body, counted on the bytes received, chunked or not; an archive upload also counts the tar it unpacks to against it',
    homes: server,
  }),
  TOOLGATE_MAX_FILE_BYTES: integer({
    name: 'TOOLGATE_MAX_FILE_BYTES',
    fallback: 32 * MiB,
    fallbackNote: '32 MiB',
    min: 1,
    max: 2 ** 31,
    cloudflareMax: 100 * 1000 * 1000,
    meaning: 'largest file a write (an append included), an import or a command may leave behind',
    homes: server,
  }),
  TOOLGATE_EDGE_MEMORY_BYTES: integer({
    name: 'TOOLGATE_EDGE_MEMORY_BYTES',
    fallback: 256 * MiB,
    fallbackNote: '256 MiB',
    min: MiB,
    max: 2 ** 31,
    meaning:
      'most file contents one command run by the edge engine (bash exec on engine "edge") may hold in memory: those it reads and those it writes',
    homes: server,
  }),
  TOOLGATE_EDGE_THREADS: integer({
    name: 'TOOLGATE_EDGE_THREADS',
    fallback: 2,
    min: 1,
    max: 64,
    meaning:
      "worker threads bash's edge engine runs commands on (each takes several at once), so no script holds the event loop; started on first use",
    homes: ['node'],
  }),
  TOOLGATE_DEFAULT_READ_MAX_CHARS: integer({
    name: 'TOOLGATE_DEFAULT_READ_MAX_CHARS',
    fallback: 20_000,
    min: 1,
    max: 2 ** 31,
    meaning: "`read_file`'s `maxChars` when the call gives none",
    homes: server,
  }),
  TOOLGATE_READ_ONLY_ROOTS: {
    defaultText: 'none',
    valuesText: '`path=workspace,...`',
    meaning:
      'read-only roots, e.g. `.skills=skills` shows workspace `skills` read-only at `.skills/` in every other workspace',
    homes: ['node'],
    parse: parseReadOnlyRoots,
  } satisfies Setting<ReadOnlyRootSetting[]>,
  TOOLGATE_RUNNER: onOff({
    name: 'TOOLGATE_RUNNER',
    fallback: true,
    meaning:
      'run a runner inside the server process (with a runner key of its own, new at every start); `off` to run runners separately. Under `npm run start:worker`: attach a runner',
    homes: serverAndDev,
  }),
  TOOLGATE_RUNNER_KEY: text({
    fallback: undefined,
    defaultText: 'none',
    valuesText: 'a secret',
    meaning:
      'for `toolgate runner`: its key (role runner), kept off its command line. For the Cloudflare Worker: the secret of a runner key for every workspace, made at start (`npm run start:worker` sets one for the runner it attaches)',
    homes: ['runner', 'cloudflare'],
  }),
  TOOLGATE_RUNNER_NETWORK: onOff({
    name: 'TOOLGATE_RUNNER_NETWORK',
    fallback: false,
    meaning: 'let commands of the in-process (or attached) runner use the network',
    homes: serverAndDev,
  }),
  TOOLGATE_RUNNER_OVERLAY: onOff({
    name: 'TOOLGATE_RUNNER_OVERLAY',
    fallback: true,
    meaning:
      "the in-process (or attached) runner tracks an exec's changes with an overlay where the host can (`off`: scan the copy after each command)",
    homes: serverAndDev,
  }),
  TOOLGATE_SANDBOX: {
    defaultText: '`bwrap`',
    valuesText: '`bwrap` or `none`',
    meaning:
      '`bwrap`: commands run only in bubblewrap, and are refused (`503 unavailable`) where it is missing. `none`: commands run without a sandbox, on purpose, in their own process group as the runner\'s user; the server warns at start and `/healthz` answers `{"ok": true, "sandbox": "none"}` (the Worker reads it for that alone)',
    homes: [...runners, 'cloudflare'],
    parse(raw) {
      const mode = isUnset(raw) ? 'bwrap' : raw;
      if (mode !== 'bwrap' && mode !== 'none')
        throw new Error(`TOOLGATE_SANDBOX must be "bwrap" or "none"; it is ${JSON.stringify(mode)}.`);
      return mode;
    },
  } satisfies Setting<'bwrap' | 'none'>,
  TOOLGATE_BWRAP_PATH: {
    defaultText: '`/usr/bin/bwrap`, else `bwrap` on `PATH`',
    valuesText: 'an absolute path',
    meaning:
      'the bubblewrap binary runners use; where it names no executable file, commands are refused as without bubblewrap',
    homes: runners,
    parse(raw) {
      if (isUnset(raw)) return undefined;
      if (!raw.startsWith('/'))
        throw new Error(`TOOLGATE_BWRAP_PATH must be an absolute path; it is ${JSON.stringify(raw)}.`);
      return raw;
    },
  } satisfies Setting<string | undefined>,
  // 0 would be the root the runner runs as: exactly what the uid is there to avoid.
  TOOLGATE_RUNNER_UID: integer({
    name: 'TOOLGATE_RUNNER_UID',
    fallback: 65534,
    min: 1,
    max: 2 ** 31 - 2,
    meaning: 'the uid (and gid) commands run as when the runner runs as root; never 0',
    homes: runners,
  }),
  TOOLGATE_PROCESS_MEMORY_MB: integer({
    name: 'TOOLGATE_PROCESS_MEMORY_MB',
    fallback: 2048,
    min: 16,
    max: 1024 * 1024,
    meaning: 'memory (MiB) of one command and everything it starts; past it the kernel kills it (exit code 137)',
    homes: runners,
  }),
  TOOLGATE_PROCESS_PIDS: integer({
    name: 'TOOLGATE_PROCESS_PIDS',
    fallback: 512,
    min: 8,
    max: 4_194_304,
    meaning: 'processes (and threads) one command may have at once; a fork past it fails',
    homes: runners,
  }),
  TOOLGATE_MAX_PROCESS_MS: integer({
    name: 'TOOLGATE_MAX_PROCESS_MS',
    fallback: 3_600_000,
    fallbackNote: '1 hour',
    min: 1000,
    max: 30 * DAY_MS,
    meaning:
      'how long a started process may run: then it is stopped (SIGTERM, SIGKILL 5 s later) and ends `stopped`; `exec` keeps its own `timeoutMs`',
    homes: runners,
  }),
  TOOLGATE_LEASE_MS: integer({
    name: 'TOOLGATE_LEASE_MS',
    fallback: 15_000,
    min: 1000,
    max: 3_600_000,
    meaning:
      'runner lease; a job whose runner stops renewing it is `lost` within the lease plus at most 5 s (one sweep)',
    homes: server,
  }),
  TOOLGATE_WORKSPACE_MAX_PROCESSES: integer({
    name: 'TOOLGATE_WORKSPACE_MAX_PROCESSES',
    fallback: 4,
    min: 1,
    max: 10_000,
    meaning: 'processes of one workspace that run at once; more wait `queued` (runners take workspaces in turn)',
    homes: server,
  }),
  TOOLGATE_PROCESS_ACCRUAL_MS: integer({
    name: 'TOOLGATE_PROCESS_ACCRUAL_MS',
    fallback: 10_000,
    min: 100,
    max: 30_000,
    meaning: "how often running processes' seconds are counted against `processSeconds` quotas",
    homes: server,
  }),
  TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: integer({
    name: 'TOOLGATE_MAX_PROCESS_OUTPUT_CHARS',
    fallback: 1_048_576,
    min: 1024,
    max: 2 ** 30,
    cloudflareMax: 16 * MiB,
    meaning: 'output kept per process (a ring buffer: the oldest output goes first)',
    homes: server,
  }),
  TOOLGATE_APPROVAL_TTL_MS: integer({
    name: 'TOOLGATE_APPROVAL_TTL_MS',
    fallback: 3_600_000,
    fallbackNote: '1 hour',
    min: 1000,
    max: 30 * DAY_MS,
    meaning: 'how long a call may wait for approval before it is rejected with the reason `expired`',
    homes: server,
  }),
  TOOLGATE_STREAM_KEEPALIVE_MS: integer({
    name: 'TOOLGATE_STREAM_KEEPALIVE_MS',
    fallback: 15_000,
    min: 100,
    max: 300_000,
    meaning:
      'how long an event stream (a log stream, the approvals stream) stays quiet before a keep-alive comment; a stream also asks this often whether its key was revoked, and the Cloudflare home notices a client gone at the next write',
    homes: server,
  }),
  TOOLGATE_BLOB_GC_GRACE_MS: integer({
    name: 'TOOLGATE_BLOB_GC_GRACE_MS',
    fallback: 600_000,
    fallbackNote: '10 minutes',
    min: 0,
    max: 30 * DAY_MS,
    meaning:
      'how long a file content no workspace, checkpoint or commit in flight refers to is kept before the sweeper deletes it',
    homes: server,
  }),
  TOOLGATE_BLOB_GC_INTERVAL_MS: integer({
    name: 'TOOLGATE_BLOB_GC_INTERVAL_MS',
    fallback: 60_000,
    fallbackNote: '1 minute',
    min: 10,
    max: DAY_MS,
    meaning:
      'how often the sweeper looks for file contents to delete (a sweep starts only once the last has ended; on Cloudflare each workspace object sweeps its own store while it has something to sweep)',
    homes: server,
  }),
  TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS: integer({
    name: 'TOOLGATE_BLOB_JOURNAL_MOVE_DELAY_MS',
    fallback: 0,
    min: 0,
    max: DAY_MS,
    meaning:
      "how long a journal of the data dir's blob store (a large set of small contents written as one file, such as an archive upload) waits before its contents are moved to files of their own; only tests set it, to stop a server while one is pending",
    homes: ['node'],
  }),
  TOOLGATE_RATE_LIMIT_PER_MINUTE: integer({
    name: 'TOOLGATE_RATE_LIMIT_PER_MINUTE',
    fallback: 0,
    fallbackNote: 'none',
    min: 0,
    max: 1_000_000,
    meaning: 'tool calls a minute per key, for keys created without their own `rateLimitPerMinute`',
    homes: server,
  }),
  TOOLGATE_IMPORT_MAX_FILES: integer({
    name: 'TOOLGATE_IMPORT_MAX_FILES',
    fallback: 10_000,
    min: 1,
    max: 1_000_000,
    meaning: 'files and symlinks one git import may create',
    homes: server,
  }),
  TOOLGATE_IMPORT_MAX_BYTES: integer({
    name: 'TOOLGATE_IMPORT_MAX_BYTES',
    fallback: 32 * MiB,
    fallbackNote: '32 MiB',
    min: 1,
    max: 2 ** 31,
    // An import holds the fetched pack in the object's memory (128 MB), so its bytes stay well below that.
    cloudflareMax: 48 * MiB,
    meaning: 'bytes of file content one git import may create; the pack downloaded may exceed it by at most 1 MiB',
    homes: server,
  }),
  TOOLGATE_IMPORT_TIMEOUT_MS: integer({
    name: 'TOOLGATE_IMPORT_TIMEOUT_MS',
    fallback: 120_000,
    min: 1000,
    max: 3_600_000,
    meaning: 'how long a git remote may take to send the repository (then `504 timeout`)',
    homes: server,
  }),
  TOOLGATE_EGRESS_ALLOW_HOSTS: {
    defaultText: 'none',
    valuesText: 'host names, IP addresses or CIDR ranges, comma-separated',
    meaning:
      'hosts git imports and approval notices may reach although the egress rule refuses their addresses (loopback, private, ...), e.g. `git.internal.example,10.1.0.0/16`; a bad entry stops the server at start',
    homes: server,
    parse: (raw) => parseEgressAllowList(raw),
  } satisfies Setting<EgressAllowList>,
  TOOLGATE_S3_BUCKET: text({
    fallback: undefined,
    defaultText: 'unset',
    valuesText: 'a bucket name',
    meaning:
      "when set, file contents go to this S3 bucket instead of `blobs/`; credentials come from the AWS SDK's standard chain (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, ...)",
    homes: ['node'],
  }),
  TOOLGATE_S3_ENDPOINT: text({
    fallback: undefined,
    defaultText: 'AWS',
    valuesText: 'a URL',
    meaning: 'an S3-compatible endpoint (MinIO, R2, ...); path-style addressing is used with it',
    homes: ['node'],
  }),
  TOOLGATE_S3_REGION: text({
    fallback: 'us-east-1',
    defaultText: '`us-east-1`',
    valuesText: 'a region',
    meaning: "the bucket's region",
    homes: ['node'],
  }),
  TOOLGATE_COUNT_OBJECT_REQUESTS: onOff({
    name: 'TOOLGATE_COUNT_OBJECT_REQUESTS',
    fallback: false,
    meaning:
      "the Cloudflare home's objects each count the requests they serve in their own storage (table `object_requests`), for measuring how load spreads over them (docs/scale.md); costs one write a request",
    homes: ['cloudflare'],
  }),
  TOOLGATE_WORKER_SCRIPT: text({
    fallback: undefined,
    defaultText: 'unset: built from `functions/worker.ts` at start, and again at every change of its sources',
    valuesText: 'a file',
    meaning:
      '`npm run start:worker` serves this Worker script, built before by `npm run build:worker` as `wrangler deploy` builds it, and watches no sources (the worker-home tests build one for all their servers)',
    homes: ['worker-dev'],
  }),
} as const satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof settings;
export type SettingValue<N extends SettingName> = ReturnType<(typeof settings)[N]['parse']>;

export const settingNames = Object.keys(settings) as SettingName[];

/** One setting's value as `home` reads it; throws an Error naming the variable when its text is malformed. */
export function readSetting<N extends SettingName>(env: SettingsSource, name: N, home: SettingsHome): SettingValue<N> {
  const setting: Setting<unknown> = settings[name];
  return setting.parse(env[name], home) as SettingValue<N>;
}

/** The names `home` reads, in table order. */
export function settingsReadBy(home: SettingsHome): SettingName[] {
  return settingNames.filter((name) => (settings[name].homes as readonly SettingsHome[]).includes(home));
}

// Composition root of the Cloudflare home: the Worker forwards every request to one Durable
// Object that holds the metadata (its SQLite) and serves the same app as the Node home, with
// blobs in R2. Runners lease jobs from it over the same runner protocol.
import { createCallServices, type CallServices } from '../src/calls/call-services.ts';
import { createApp } from '../src/http/app.ts';
import { errorResponse } from '../src/http/error-response.ts';
import { readBodyBytes } from '../src/http/json-body.ts';
import { ProcessStore } from '../src/processes/process-store.ts';
import { DurableObjectSqlDatabase, type DurableObjectStorageBinding } from '../src/storage/durable-object-sql-database.ts';
import { R2ObjectStore, type R2BucketBinding } from '../src/storage/r2-object-store.ts';
import { builtinTools } from '../src/tools/index.ts';
import { ToolRegistry } from '../src/tools/registry.ts';
import { Workspaces } from '../src/workspace/workspaces.ts';

interface DurableObjectStub {
  fetch(request: Request): Promise<Response>;
}

interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DurableObjectStub;
}

interface DurableObjectState {
  storage: DurableObjectStorageBinding & {
    setAlarm(at: number): Promise<void>;
    getAlarm(): Promise<number | null>;
  };
  blockConcurrencyWhile<T>(work: () => Promise<T>): Promise<T>;
}

export interface Env {
  TOOLGATE: DurableObjectNamespace;
  BLOBS: R2BucketBinding;
  /** The first admin key (a secret: `wrangler secret put TOOLGATE_API_KEY`). */
  TOOLGATE_API_KEY?: string;
  TOOLGATE_MAX_BODY_BYTES?: string;
  TOOLGATE_MAX_FILE_BYTES?: string;
  TOOLGATE_DEFAULT_READ_MAX_CHARS?: string;
  TOOLGATE_LEASE_MS?: string;
  TOOLGATE_MAX_PROCESS_OUTPUT_CHARS?: string;
  TOOLGATE_APPROVAL_TTL_MS?: string;
  TOOLGATE_RATE_LIMIT_PER_MINUTE?: string;
}

const MiB = 1024 * 1024;
/** Jobs of vanished runners are swept this often while any job is queued or running. */
const SWEEP_MS = 5_000;
/** A Durable Object has 128 MB of memory: the blob cache keeps a small share of it. */
const BLOB_CACHE_BYTES = 16 * MiB;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    let forwarded = request;
    if (request.body) {
      // The body is read here, within the limit, and handed on whole: a body still streaming to
      // the object when it has answered (a refusal before reading it) makes workerd fail the request.
      try {
        const bytes = await readBodyBytes(request, maxBodyBytes(env));
        forwarded = new Request(request, { body: bytes });
      } catch (error) {
        return errorResponse(error, (failure) => console.error('toolgate: could not read a request body', failure));
      }
    }
    // One object owns all metadata, as one process does in the Node home.
    return env.TOOLGATE.get(env.TOOLGATE.idFromName('toolgate')).fetch(forwarded);
  },
};

function maxBodyBytes(env: Env): number {
  // Cloudflare refuses request bodies over 100 MB before the Worker sees them.
  return integer(env.TOOLGATE_MAX_BODY_BYTES, 'TOOLGATE_MAX_BODY_BYTES', 10 * MiB, 1, 100 * 1000 * 1000);
}

/** The one Durable Object holding toolgate's metadata and serving the API. */
export class ToolgateObject {
  private readonly ready: Promise<void>;
  private app: ReturnType<typeof createApp> | undefined;
  private processes: ProcessStore | undefined;
  private services: CallServices | undefined;
  private failure: string | undefined;

  constructor(
    private readonly state: DurableObjectState,
    private readonly env: Env,
  ) {
    this.ready = state.blockConcurrencyWhile(() =>
      this.build().catch((error: unknown) => {
        this.failure = `toolgate could not start: ${error instanceof Error ? error.message : String(error)}`;
      }),
    );
  }

  async fetch(request: Request): Promise<Response> {
    await this.ready;
    if (!this.app) {
      return Response.json({ error: { code: 'unavailable', message: this.failure ?? 'toolgate is not configured.' } }, { status: 503 });
    }
    const response = await this.app.fetch(request);
    await this.scheduleSweep();
    return response;
  }

  /** Marks jobs of vanished runners lost and expires approvals; repeats while jobs are active. */
  async alarm(): Promise<void> {
    await this.ready;
    this.processes?.sweep();
    this.services?.calls.expire();
    await this.scheduleSweep();
  }

  private async build(): Promise<void> {
    const secret = this.env.TOOLGATE_API_KEY;
    if (!secret) {
      this.failure = 'TOOLGATE_API_KEY is not set; set it with `wrangler secret put TOOLGATE_API_KEY` (or --var locally) and retry.';
      return;
    }
    const env = this.env;
    const db = new DurableObjectSqlDatabase(this.state.storage);
    const workspaces = new Workspaces(db, new R2ObjectStore(env.BLOBS), [], BLOB_CACHE_BYTES);
    const processes = new ProcessStore(db, {
      leaseMs: integer(env.TOOLGATE_LEASE_MS, 'TOOLGATE_LEASE_MS', 15_000, 1000, 3_600_000),
      maxOutputChars: integer(env.TOOLGATE_MAX_PROCESS_OUTPUT_CHARS, 'TOOLGATE_MAX_PROCESS_OUTPUT_CHARS', 1_048_576, 1024, 16 * MiB),
    });
    const tools = new ToolRegistry(builtinTools);
    const limits = {
      maxBodyBytes: maxBodyBytes(env),
      maxFileBytes: integer(env.TOOLGATE_MAX_FILE_BYTES, 'TOOLGATE_MAX_FILE_BYTES', 32 * MiB, 1, 100 * 1000 * 1000),
      defaultReadMaxChars: integer(env.TOOLGATE_DEFAULT_READ_MAX_CHARS, 'TOOLGATE_DEFAULT_READ_MAX_CHARS', 20_000, 1, 2 ** 31),
    };
    const services = createCallServices({
      db,
      tools,
      workspaces,
      limits,
      processes,
      approvalTtlMs: integer(env.TOOLGATE_APPROVAL_TTL_MS, 'TOOLGATE_APPROVAL_TTL_MS', 3_600_000, 1000, 30 * 24 * 3_600_000),
      rateLimitPerMinute: integer(env.TOOLGATE_RATE_LIMIT_PER_MINUTE, 'TOOLGATE_RATE_LIMIT_PER_MINUTE', 0, 0, 1_000_000),
    });
    await services.keys.ensureBootstrapAdmin(secret);
    this.app = createApp({ workspaces, processes, tools, limits, ...services });
    this.processes = processes;
    this.services = services;
  }

  /** An alarm for the next sweep while jobs are active, or for the next approval to expire. */
  private async scheduleSweep(): Promise<void> {
    const sweepAt = this.processes?.hasActiveJobs() ? Date.now() + SWEEP_MS : Infinity;
    const at = Math.min(sweepAt, this.services?.approvals.nextExpiry() ?? Infinity);
    if (at === Infinity) return;
    const current = await this.state.storage.getAlarm();
    if (current === null || current > at) await this.state.storage.setAlarm(at);
  }
}

function integer(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}.`);
  return value;
}

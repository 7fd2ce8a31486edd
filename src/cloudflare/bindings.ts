// What the Cloudflare home is given: its bindings and variables, read into typed settings, and
// the way its objects call one another.
import type { Hono, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import type {
  JobMessage,
  ObjectCall,
  ObjectCallAnswer,
  ObjectCallAnswerInput,
  ObjectCallBody,
} from '../contract/object-calls.ts';
import { parseInput } from '../contract/parse-input.ts';
import { readServerSettings } from '../contract/server-settings.ts';
import { readSetting } from '../contract/settings.ts';
import { errorStatus, ToolError, type ErrorBody } from '../core/errors.ts';
import type { AppEnv } from '../http/app-deps.ts';
import { errorResponse } from '../http/error-response.ts';
import { readJsonBody } from '../http/json-body.ts';
import type { DurableObjectStorageBinding } from '../storage/durable-object-sql-database.ts';
import type { R2BucketBinding } from '../storage/r2-object-store.ts';

export interface DurableObjectStub {
  fetch(request: Request): Promise<Response>;
}

export interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): DurableObjectStub;
}

export interface DurableObjectState {
  storage: DurableObjectStorageBinding & {
    setAlarm(at: number): Promise<void>;
    getAlarm(): Promise<number | null>;
  };
  blockConcurrencyWhile<T>(work: () => Promise<T>): Promise<T>;
}

/** A Cloudflare Queue producer: messages of at most 128 KB, delivered at least once. */
export interface QueueBinding<Body> {
  send(body: Body): Promise<void>;
}

/** What the Queue carries: the id of a job and the workspace that holds it, nothing more. */
export type { JobMessage };

export interface Env {
  /** One object per workspace: its manifest, processes, logs, approvals and usage records. */
  WORKSPACES: DurableObjectNamespace;
  /** One object per key, named by its id: its record, its rate limit and its quota ledger (key-object.ts). */
  KEYS: DurableObjectNamespace;
  /** One object: the key listing, webhooks, the index of workspace objects and the listings that span them. */
  DIRECTORY: DurableObjectNamespace;
  /** Dispatcher shards (DISPATCHER_SHARDS): job ids from the Queue, handed to runners that lease. */
  DISPATCHER: DurableObjectNamespace;
  /** One object per store that forks in several objects share: who reads it (store-family-object.ts). */
  STORE_FAMILIES: DurableObjectNamespace;
  JOBS: QueueBinding<JobMessage>;
  BLOBS: R2BucketBinding;
  /** The first admin key (a secret: `wrangler secret put TOOLGATE_API_KEY`). */
  TOOLGATE_API_KEY?: string;
  /** Optional: the secret of a runner key for every workspace (a secret; `npm run start:worker` sets one for the runner it attaches). */
  TOOLGATE_RUNNER_KEY?: string;
  TOOLGATE_MAX_BODY_BYTES?: string;
  TOOLGATE_MAX_FILE_BYTES?: string;
  TOOLGATE_DEFAULT_READ_MAX_CHARS?: string;
  TOOLGATE_LEASE_MS?: string;
  TOOLGATE_WORKSPACE_MAX_PROCESSES?: string;
  TOOLGATE_MAX_PROCESS_OUTPUT_CHARS?: string;
  TOOLGATE_APPROVAL_TTL_MS?: string;
  TOOLGATE_STREAM_KEEPALIVE_MS?: string;
  TOOLGATE_BLOB_GC_GRACE_MS?: string;
  TOOLGATE_BLOB_GC_INTERVAL_MS?: string;
  TOOLGATE_PROCESS_ACCRUAL_MS?: string;
  TOOLGATE_RATE_LIMIT_PER_MINUTE?: string;
  TOOLGATE_IMPORT_MAX_FILES?: string;
  TOOLGATE_IMPORT_MAX_BYTES?: string;
  TOOLGATE_IMPORT_TIMEOUT_MS?: string;
  TOOLGATE_EGRESS_ALLOW_HOSTS?: string;
  /** `on` to have each object count the requests it serves (docs/scale.md measures with it). */
  TOOLGATE_COUNT_OBJECT_REQUESTS?: string;
  /** `none` when the attached runners run commands unsandboxed on purpose: /healthz says so. */
  TOOLGATE_SANDBOX?: string;
  TOOLGATE_EDGE_MEMORY_BYTES?: string;
}

/** The settings every object reads from the variables; a bad value stops the object with a clear message. */
export function readSettings(env: Env) {
  return {
    ...readServerSettings(env, 'cloudflare'),
    // Only 'none' changes anything the Worker serves (/healthz); commands run on the runners.
    sandbox: readSetting(env, 'TOOLGATE_SANDBOX', 'cloudflare') === 'none' ? ('none' as const) : undefined,
  };
}

export type Settings = ReturnType<typeof readSettings>;

/** Paths under this prefix are the objects' calls to one another; the Worker never forwards them from outside. */
export const INTERNAL_PREFIX = '/internal/';
/**
 * Set on the objects' calls to one another and removed by the Worker from every request it
 * forwards: an internal route answers only a request carrying it, however its path was spelled.
 */
export const INTERNAL_HEADER = 'x-toolgate-internal';

/** Guards the internal routes: a request from outside finds no route there. */
export function internalOnly(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.header(INTERNAL_HEADER) !== '1') {
      return errorResponse(
        new ToolError(
          'not_found',
          `No route for ${c.req.method} ${new URL(c.req.url).pathname}; GET /openapi.json lists the routes.`,
        ),
        () => undefined,
      );
    }
    await next();
  };
}

export function workspaceObject(env: Env, workspace: string): DurableObjectStub {
  return env.WORKSPACES.get(env.WORKSPACES.idFromName(workspace));
}

export function storeFamilyObject(env: Env, store: string): DurableObjectStub {
  return env.STORE_FAMILIES.get(env.STORE_FAMILIES.idFromName(store));
}

/** The object of the key `id` (key-identity.ts finds the id from a secret). */
export function keyObject(env: Env, id: string): DurableObjectStub {
  return env.KEYS.get(env.KEYS.idFromName(id));
}

export function directoryObject(env: Env): DurableObjectStub {
  return env.DIRECTORY.get(env.DIRECTORY.idFromName('directory'));
}

/**
 * Dispatcher shards: a runner leases from the shard its id names, and a job is offered from its
 * workspace's shard onwards until a runner waiting there takes it (worker-router.ts). Changing the
 * number strands offers held by shards no longer asked; the workspace objects' next sends repair it.
 */
export const DISPATCHER_SHARDS = 16;

/** Dispatcher shard `shard` (0 keeps the name the one dispatcher had, so offers it holds are still served). */
export function dispatcherObject(env: Env, shard: number): DurableObjectStub {
  return env.DISPATCHER.get(env.DISPATCHER.idFromName(shard === 0 ? 'dispatcher' : `dispatcher-${shard}`));
}

/** The header the Worker names a lease's dispatcher shard in, so the shard knows its number. */
export const DISPATCHER_SHARD_HEADER = 'x-toolgate-dispatcher-shard';
/** The watcher name (key-client.ts) a dispatcher shard keeps key copies under: no workspace id has a colon. */
export const dispatcherWatcher = (shard: number): string => `dispatcher:${shard}`;

/** The shard a name (a runner id, a workspace) falls in: FNV-1a, so every Worker computes the same. */
export function dispatcherShard(name: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < name.length; index += 1) {
    hash ^= name.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % DISPATCHER_SHARDS;
}

/**
 * One object's call to another, as `call` declares it: its JSON body in, its JSON answer out,
 * parsed with the call's schema (undefined for 204). A contract error the other object answered
 * (a spent quota, say) is thrown as it came, so the client sees it unchanged; any other failure,
 * an answer this object cannot read among them, is `unavailable`, which is safe to retry.
 */
export async function callObject<Call extends ObjectCall>(
  stub: DurableObjectStub,
  call: Call,
  body: ObjectCallBody<Call>,
): Promise<ObjectCallAnswer<Call>> {
  let response: Response;
  try {
    response = await stub.fetch(
      new Request(`https://toolgate.internal${INTERNAL_PREFIX}${call.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [INTERNAL_HEADER]: '1' },
        body: JSON.stringify(body),
      }),
    );
  } catch (error) {
    throw new ToolError(
      'unavailable',
      `A part of toolgate could not be reached (${(error as Error).message}); retry the call.`,
    );
  }
  // The casts name what the call declares: 204 is its answer of none, and readAnswer parsed any other with its schema.
  if (response.status === 204) return undefined as ObjectCallAnswer<Call>;
  const text = await response.text();
  if (response.ok) return readAnswer(call, text) as ObjectCallAnswer<Call>;
  let error: Partial<ErrorBody['error']> | undefined;
  try {
    error = (JSON.parse(text) as Partial<ErrorBody>).error;
  } catch {
    // Not a contract error: reported as unavailable below.
  }
  if (error?.code !== undefined && error.code in errorStatus && typeof error.message === 'string')
    throw new ToolError(error.code, error.message, error.details);
  throw new ToolError('unavailable', `A part of toolgate answered ${response.status}; retry the call.`);
}

/**
 * A call's answer, parsed with its schema: one that does not fit (the objects' versions differ
 * while a deploy rolls out) is `unavailable`, naming what did not fit.
 */
function readAnswer(call: ObjectCall, text: string): unknown {
  try {
    if (call.answer === null) throw new Error('an answer where none is declared');
    return parseInput(call.answer, JSON.parse(text), `answer to ${call.path}`);
  } catch (error) {
    throw new ToolError(
      'unavailable',
      `A part of toolgate answered the internal call ${call.path} in a form this one does not read (${(error as Error).message}); retry the call.`,
    );
  }
}

/** The body of an internal call, parsed with its schema: a bad one is `invalid_argument`, naming every bad field. */
export async function readCallBody<Call extends ObjectCall>(
  call: Call,
  request: Request,
  maxBodyBytes: number,
): Promise<z.output<Call['body']>> {
  return parseInput<Call['body']>(
    call.body,
    await readJsonBody(request, maxBodyBytes),
    `body of the internal call ${call.path}`,
  );
}

/** The answer to an internal call, as `call` declares it: its JSON, or 204 when there is none. */
export function answerCall<Call extends ObjectCall>(_call: Call, value: ObjectCallAnswerInput<Call>): Response {
  return value === undefined ? new Response(null, { status: 204 }) : Response.json(value);
}

/**
 * What serves the internal calls on `routes`: each call's body parsed with its schema, and what its
 * handler gives answered as the call declares.
 */
export function callServer(routes: Hono<AppEnv>, maxBodyBytes: number) {
  return <Call extends ObjectCall>(
    call: Call,
    handle: (body: z.output<Call['body']>) => ObjectCallAnswerInput<Call> | Promise<ObjectCallAnswerInput<Call>>,
  ): void => {
    routes.post(`/${call.path}`, async (c) =>
      answerCall(call, await handle(await readCallBody(call, c.req.raw, maxBodyBytes))),
    );
  };
}

// The Cloudflare Worker: sends each request to the object that holds what it is about (a
// workspace's object, a dispatcher shard for leases, the caller's key object for its usage and
// approval listings, the directory for the rest), and feeds the dispatcher shards from the job Queue.
import { dispatcherCalls } from '../contract/object-calls.ts';
import { errorResponse } from '../http/error-response.ts';
import { readBodyBytes } from '../http/json-body.ts';
import { ToolError } from '../core/errors.ts';
import { WORKSPACE_ID_PATTERN } from '../workspace/workspaces.ts';
import {
  callObject,
  directoryObject,
  dispatcherObject,
  dispatcherShard,
  DISPATCHER_SHARDS,
  DISPATCHER_SHARD_HEADER,
  INTERNAL_HEADER,
  INTERNAL_PREFIX,
  keyObject,
  readSettings,
  workspaceObject,
  type DurableObjectStub,
  type Env,
  type JobMessage,
} from './bindings.ts';
import { KeyIdentities } from './key-identity.ts';
import { WORKSPACE_HEADER } from './workspace-object.ts';
import { consoleLog as log } from '../core/log.ts';

/** Where a workspace named by an invalid id is sent: its object refuses every call with the contract's error, and records it. */
const INVALID_WORKSPACE = '~invalid';

/** A Queue message as the consumer receives it. */
export interface QueueMessage<Body> {
  body: Body;
  ack(): void;
  retry(): void;
}

export const worker = {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const logFailure = (failure: unknown) => log('could not route a request', failure);
    if (url.pathname.startsWith(INTERNAL_PREFIX)) {
      return errorResponse(
        new ToolError(
          'not_found',
          `No route for ${request.method} ${url.pathname}; GET /openapi.json lists the routes.`,
        ),
        logFailure,
      );
    }
    const headers = new Headers(request.headers);
    headers.delete(WORKSPACE_HEADER);
    headers.delete(INTERNAL_HEADER);
    headers.delete(DISPATCHER_SHARD_HEADER);
    let body: Uint8Array | undefined;
    if (request.body) {
      // Read here, within the limit, and handed on whole: a body still streaming to an object
      // when it has answered (a refusal before reading it) makes workerd fail the request.
      try {
        body = await readBodyBytes(request, readSettings(env).maxBodyBytes);
      } catch (error) {
        return errorResponse(error, logFailure);
      }
    }
    const { stub, workspace, shard } = await route(url.pathname, env, body, request.headers.get('authorization'));
    if (workspace !== undefined) headers.set(WORKSPACE_HEADER, workspace);
    if (shard !== undefined) headers.set(DISPATCHER_SHARD_HEADER, String(shard));
    return stub.fetch(new Request(request.url, { method: request.method, headers, body, signal: request.signal }));
  },

  /** Job ids from the Queue go to the dispatcher shards; a message is acknowledged once they hold the offer. */
  async queue(batch: { messages: readonly QueueMessage<JobMessage>[] }, env: Env): Promise<void> {
    await Promise.all(
      batch.messages.map(async (message) => {
        try {
          await offerJob(env, message.body);
          message.ack();
        } catch (error) {
          log(`could not offer job ${message.body.jobId}; the Queue delivers it again`, error);
          message.retry();
        }
      }),
    );
  },
};

/**
 * Offers a job to its workspace's dispatcher shard, and when no runner waiting there takes it, to
 * every other shard at once: the first runner waiting anywhere takes it, and when none does (every
 * runner busy, or none connected) every shard holds it, so the next runner to lease anywhere finds
 * it. A job offered by several shards is leased once: its workspace object decides, and the other
 * shards drop their copies when it answers that the job no longer waits.
 */
async function offerJob(env: Env, job: JobMessage): Promise<void> {
  const home = job.shard !== undefined && job.shard < DISPATCHER_SHARDS ? job.shard : dispatcherShard(job.workspace);
  if ((await callObject(dispatcherObject(env, home), dispatcherCalls.offer, job))?.claimed) return;
  const others = Array.from({ length: DISPATCHER_SHARDS - 1 }, (_, step) => (home + 1 + step) % DISPATCHER_SHARDS);
  await Promise.all(others.map((shard) => callObject(dispatcherObject(env, shard), dispatcherCalls.offer, job)));
}

/** The dispatcher shard a runner leases from: the one its runner id names, so its lease requests wait where its offers come. */
function leaseShard(body: Uint8Array | undefined): number {
  try {
    const runnerId = (JSON.parse(new TextDecoder().decode(body)) as { runnerId?: unknown }).runnerId;
    return typeof runnerId === 'string' ? dispatcherShard(runnerId) : 0;
  } catch {
    // Not JSON: the shard refuses it with the contract's error.
    return 0;
  }
}

/** The object a request is for, and the workspace it is about when that object is a workspace's. */
async function route(
  path: string,
  env: Env,
  body: Uint8Array | undefined,
  authorization: string | null,
): Promise<{ stub: DurableObjectStub; workspace?: string; shard?: number }> {
  const workspace = /^\/v1\/(?:runner\/)?workspaces\/([^/]+)(?:\/|$)/.exec(path)?.[1];
  if (workspace !== undefined) return workspaceRoute(safeDecode(workspace), env);
  // Approval ids end in `.<workspace>`: the decision goes straight to the object holding the approval.
  const approval = /^\/v1\/approvals\/[^/]*\.([a-z0-9][a-z0-9_-]{0,62})(?:\/|$)/.exec(path)?.[1];
  if (approval !== undefined) return workspaceRoute(approval, env);
  if (path === '/v1/runner/lease') {
    const shard = leaseShard(body);
    return { stub: dispatcherObject(env, shard), shard };
  }
  // A key's listings are its own object's, which asks the workspaces in the key's scope and no other.
  if (path === '/v1/usage' || path === '/v1/approvals' || path.startsWith('/v1/approvals/')) {
    const identity = await identitiesOf(env).of(/^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '');
    if (identity) return { stub: keyObject(env, identity.id) };
  }
  // What is left, and a listing sent with no key (the directory answers 401).
  return { stub: directoryObject(env) };
}

/** Secrets' key ids, remembered for each deployment's bindings this isolate serves. */
const identities = new WeakMap<Env, KeyIdentities>();

function identitiesOf(env: Env): KeyIdentities {
  let known = identities.get(env);
  if (!known) identities.set(env, (known = new KeyIdentities(env)));
  return known;
}

function workspaceRoute(workspace: string, env: Env): { stub: DurableObjectStub; workspace: string } {
  const name = WORKSPACE_ID_PATTERN.test(workspace) ? workspace : INVALID_WORKSPACE;
  return { stub: workspaceObject(env, name), workspace: name };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

// Webhook routes: configure a hook (admin keys), and take its deliveries, which are authenticated
// by their signature alone (the key middleware lets exactly POST /v1/hooks/{hookId} through).
import { Hono } from 'hono';
import { hookInput } from '../contract/http-requests.ts';
import type { CallAnswer } from '../calls/tool-calls.ts';
import { ToolError } from '../core/errors.ts';
import type { HookDeliveries } from '../hooks/hook-deliveries.ts';
import { verifySignature } from '../hooks/hook-signature.ts';
import { hookTarget, publicHook, type Hook } from '../hooks/hook-store.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import { parseInput } from '../contract/parse-input.ts';
import { WORKSPACE_ID_PATTERN } from '../workspace/workspaces.ts';
import type { AppDeps, AppEnv, HookDeliverer, HookServices } from './app-deps.ts';
import { parseJsonBytes, readBodyBytes, readJsonBody } from './json-body.ts';
import { assertWorkspaceVisible } from './route-access.ts';

/** The delivery headers that name a delivery; the first one present is its idempotency key. */
export const DELIVERY_ID_HEADERS = ['x-delivery-id', 'x-github-delivery'] as const;

/** The hook routes' services, and the body limit their deliveries are read within. */
export type HookRouteDeps = HookServices & Pick<AppDeps, 'limits'>;

export function hookRoutes(deps: HookRouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const now = deps.now ?? Date.now;

  routes.put('/hooks/:hookId', async (c) => {
    const key = c.get('key');
    const id = c.req.param('hookId');
    if (!WORKSPACE_ID_PATTERN.test(id)) {
      throw new ToolError('invalid_argument', `The hook id must match ${WORKSPACE_ID_PATTERN.source}.`, { hookId: id });
    }
    const input = parseInput(hookInput, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'hook');
    // A hook of another tenant is absent to this key: it can neither re-point nor take it over.
    const existing = deps.hooks.get(id);
    if (existing && !canSeeWorkspace(key, existing.workspace)) throw absentHook(id);
    assertWorkspaceVisible(key, input.workspace);
    if (input.checkpoint && !deps.checkpoints) {
      throw new ToolError(
        'invalid_argument',
        'checkpoint: this server keeps no workspace history, so it cannot make checkpoints; configure the hook without it.',
        { field: 'checkpoint' },
      );
    }
    const { hook, created } = deps.hooks.put({
      id,
      workspace: input.workspace,
      secret: input.secret,
      ownerKeyId: key.id,
      checkpoint: input.checkpoint ?? false,
      requireTimestamp: input.requireTimestamp ?? false,
    });
    return c.json(publicHook(hook), created ? 201 : 200);
  });

  routes.get('/hooks', (c) => {
    const key = c.get('key');
    return c.json({
      hooks: deps.hooks
        .list()
        .filter((hook) => canSeeWorkspace(key, hook.workspace))
        .map(publicHook),
    });
  });

  routes.get('/hooks/:hookId', (c) => {
    const key = c.get('key');
    return c.json(publicHook(visibleHook(deps, key, c.req.param('hookId'))));
  });

  routes.delete('/hooks/:hookId', (c) => {
    const key = c.get('key');
    deps.hooks.delete(visibleHook(deps, key, c.req.param('hookId')).id);
    return c.body(null, 204);
  });

  routes.post('/hooks/:hookId', async (c) => {
    const bytes = await readBodyBytes(c.req.raw, deps.limits.maxBodyBytes);
    const id = c.req.param('hookId');
    // An unknown id fails exactly as a wrong signature does, so ids cannot be probed.
    const hook: Hook | undefined = WORKSPACE_ID_PATTERN.test(id) ? deps.hooks.get(id) : undefined;
    await verifySignature(hook?.secret, { body: bytes, headers: c.req.raw.headers }, now(), {
      requireTimestamp: hook?.requireTimestamp ?? false,
    });
    // Past the check, the hook exists: an absent one never verifies.
    const answer = await deps.deliverer.deliver({
      hook: hookTarget(hook!),
      deliveryId: readDeliveryId(c.req.raw.headers),
      body: bytes,
      contentType: c.req.header('content-type') ?? null,
    });
    return answerResponse(answer);
  });

  return routes;
}

/** A hook an admin key may manage: one whose workspace it sees; any other answers as absent. */
function visibleHook(deps: HookRouteDeps, key: ApiKey, id: string): Hook {
  const hook = WORKSPACE_ID_PATTERN.test(id) ? deps.hooks.get(id) : undefined;
  if (!hook || !canSeeWorkspace(key, hook.workspace)) throw absentHook(id);
  return hook;
}

function absentHook(id: string): ToolError {
  return new ToolError(
    'not_found',
    `Hook ${id} does not exist for this key; configure a hook with an id of your own (PUT /v1/hooks/{id}).`,
    { hookId: id },
  );
}

/** Runs deliveries in this process, parsing the body as every JSON route does. */
export function localDeliverer(deliveries: Pick<HookDeliveries, 'deliver'>): HookDeliverer {
  return {
    deliver: ({ hook, deliveryId, body, contentType }) =>
      deliveries.deliver({
        hook,
        deliveryId,
        readBody: async () => ({ value: parseJsonBytes(body, contentType), bytes: body.byteLength }),
      }),
  };
}

/** A delivery's answer as an HTTP response. */
export function answerResponse(answer: CallAnswer): Response {
  return new Response(answer.json, {
    status: answer.status,
    headers: { 'content-type': 'application/json', ...answer.headers },
  });
}

function readDeliveryId(headers: Headers): string | undefined {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers.get(name);
    if (value === null) continue;
    if (!/^[\x21-\x7e]{1,200}$/.test(value)) {
      throw new ToolError(
        'invalid_argument',
        `The ${name} header must be 1 to 200 printable ASCII characters without spaces.`,
        { header: name },
      );
    }
    return value;
  }
  return undefined;
}

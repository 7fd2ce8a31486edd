// Bearer-key authentication for every /v1 route but webhook deliveries.
import type { MiddlewareHandler } from 'hono';
import { ToolError } from '../core/errors.ts';
import { canSeeWorkspace, type ApiKey } from '../keys/key-store.ts';
import type { AppEnv, KeyAuthority } from './app.ts';

export function authenticate(keys: KeyAuthority): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (isHookDelivery(c.req.method, c.req.path)) return next();
    const header = c.req.header('authorization');
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new ToolError('unauthorized', 'Send your API key as "Authorization: Bearer <key>".');
    const key = await keys.authenticate(match[1]!);
    if (!key) throw new ToolError('unauthorized', 'The API key is unknown or revoked; check the key you send.');
    c.set('key', key);
    await next();
  };
}

/** Webhook deliveries (exactly POST /v1/hooks/{hookId}) are authenticated by their signature alone. */
function isHookDelivery(method: string, path: string): boolean {
  return method === 'POST' && /^\/v1\/hooks\/[^/]+$/.test(path);
}

/** A workspace outside the key's scope answers exactly as an absent one does. */
export function assertWorkspaceVisible(key: ApiKey, workspace: string): void {
  if (!canSeeWorkspace(key, workspace)) {
    throw new ToolError('not_found', `Workspace ${workspace} does not exist; create it with PUT /v1/workspaces/${workspace}.`, { workspace });
  }
}

/** The roles that call tools and read their own usage; runner keys serve the runner protocol only. */
export const userRoles = ['agent', 'approver', 'admin'] as const;

/** Runner keys serve the runner protocol only. */
export function assertRole(key: ApiKey, roles: readonly ApiKey['role'][]): void {
  if (!roles.includes(key.role)) {
    throw new ToolError('forbidden', `This route needs a key with the role ${roles.join(' or ')}; this key has the role ${key.role}.`);
  }
}

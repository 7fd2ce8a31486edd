// Bearer-key authentication for every /v1 route but webhook deliveries.
import type { MiddlewareHandler } from 'hono';
import { ToolError } from '../core/errors.ts';
import type { AppEnv, KeyAuthority } from './app-deps.ts';
import { isHookDelivery } from './route-access.ts';

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

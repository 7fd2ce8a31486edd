// createApp: the Hono app of the HTTP contract, built from injected ports and services.
import { Hono } from 'hono';
import { ToolError } from '../core/errors.ts';
import type { KeyStore } from '../keys/key-store.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { approvalRoutes } from './approval-routes.ts';
import { archiveRoutes } from './archive-routes.ts';
import { authenticate } from './auth.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { docsRoutes } from './docs-routes.ts';
import { errorResponse } from './error-response.ts';
import { historyRoutes } from './history-routes.ts';
import { hookRoutes } from './hook-routes.ts';
import { keyRoutes } from './key-routes.ts';
import { logStreamRoutes } from './log-stream-routes.ts';
import { mcpRoutes } from './mcp-routes.ts';
import { assertRoutesGuarded, guardRouteGroups } from './route-access.ts';
import { runnerRoutes } from './runner-routes.ts';
import { toolListRoutes, toolRoutes } from './tool-routes.ts';
import { usageRoutes } from './usage-routes.ts';
import { workspaceRoutes } from './workspace-routes.ts';
import { consoleLog } from '../core/log.ts';

/** The whole contract on one set of services, as one process serves it. */
export function createApp(deps: AppDeps & { keys: KeyStore }): Hono<AppEnv> {
  const app = createBaseApp(deps);
  app.route('/v1', workspaceRoutes(deps));
  app.route('/v1', archiveRoutes(deps));
  app.route('/v1', toolListRoutes(deps));
  app.route('/v1', toolRoutes(deps));
  app.route('/v1', approvalRoutes({ ...deps, approvals: deps.calls, keepAliveMs: deps.streamKeepAliveMs }));
  app.route('/v1', keyRoutes(deps));
  app.route('/v1', usageRoutes({ usage: deps.meter }));
  app.route('/v1', mcpRoutes(deps));
  if (deps.history) app.route('/v1', historyRoutes({ ...deps, history: deps.history }));
  if (deps.processes) app.route('/v1', runnerRoutes({ ...deps, processes: deps.processes }));
  if (deps.processes)
    app.route('/v1', logStreamRoutes({ ...deps, processes: deps.processes, keepAliveMs: deps.streamKeepAliveMs }));
  if (deps.hooks) app.route('/v1', hookRoutes({ ...deps.hooks, limits: deps.limits }));
  assertRoutesGuarded(app);
  return app;
}

/**
 * What every app of the contract starts from: errors as the contract spells them, health, the
 * API docs, the console, key authentication of every /v1 route, and each route group's role and scope check
 * (route-access.ts). A home that spreads the contract over several objects mounts the route
 * groups each serves on one of these, then calls `assertRoutesGuarded`.
 */
export function createBaseApp(
  deps: Pick<AppDeps, 'keys' | 'tools' | 'onInternalError' | 'processes' | 'sandbox'> & { runnerProtocol?: boolean },
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const onInternal = deps.onInternalError ?? ((error: unknown) => consoleLog('internal error', error));

  app.onError((error) => errorResponse(error, onInternal));
  app.notFound((c) =>
    errorResponse(
      new ToolError(
        'not_found',
        `No route for ${c.req.method} ${new URL(c.req.url).pathname}; GET /openapi.json lists the routes.`,
      ),
      onInternal,
    ),
  );

  // Unsandboxed commands are a choice an operator (and a monitor) must be able to see.
  const health = deps.sandbox === 'none' ? { ok: true, sandbox: 'none' } : { ok: true };
  app.get('/healthz', (c) => c.json(health));
  app.route(
    '/',
    docsRoutes({ tools: deps.tools, runnerProtocol: deps.runnerProtocol ?? deps.processes !== undefined }),
  );
  app.route('/', consoleRoutes());
  app.use('/v1/*', authenticate(deps.keys));
  guardRouteGroups(app);
  return app;
}

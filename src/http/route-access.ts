// One place decides who may reach each /v1 route: the roles of its route group and, for a route
// about a workspace, the key's scope. Routes deeper down check only what is theirs alone (an
// admin-only action, the lease a runner report needs, which listed items the key sees).
import type { Hono, MiddlewareHandler } from 'hono';
import { approvalDecision, toolAllowed } from '../approvals/approval-policy.ts';
import { ToolError } from '../core/errors.ts';
import { canSeeWorkspace, type ApiKey, type KeyRole } from '../keys/key-store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AppEnv } from './app-deps.ts';

/** The roles that call tools, manage workspaces and read their own usage; runner keys serve the runner protocol only. */
export const userRoles = ['agent', 'approver', 'admin'] as const satisfies readonly KeyRole[];
const anyRole = ['agent', 'approver', 'admin', 'runner'] as const satisfies readonly KeyRole[];

export interface RouteGroup {
  name: string;
  /** A Hono path pattern; `/*` also covers the path without it. */
  pattern: string;
  roles: readonly KeyRole[];
  /** The route is about the workspace named by its `:ws` parameter: outside the key's scope it answers 404 as if absent. */
  scoped?: boolean;
}

/**
 * Every /v1 route lies in one of these groups (the app refuses to build otherwise), so a new route
 * gets its group's checks without asking. The more specific pattern comes first.
 */
export const routeGroups: readonly RouteGroup[] = [
  { name: 'runner: a workspace', pattern: '/v1/runner/workspaces/:ws/*', roles: ['runner'], scoped: true },
  { name: 'runner', pattern: '/v1/runner/*', roles: ['runner'] },
  { name: 'workspaces: files, tools, history, MCP', pattern: '/v1/workspaces/:ws/*', roles: userRoles, scoped: true },
  { name: 'approvals', pattern: '/v1/approvals/*', roles: userRoles },
  { name: 'usage', pattern: '/v1/usage', roles: userRoles },
  { name: 'keys', pattern: '/v1/keys/*', roles: anyRole },
  { name: 'hooks', pattern: '/v1/hooks/*', roles: ['admin'] },
  { name: 'tool list', pattern: '/v1/tools', roles: anyRole },
];

/** Installs each group's check; call after authentication and before any route. */
export function guardRouteGroups(app: Hono<AppEnv>): void {
  for (const group of routeGroups) app.use(group.pattern, groupGuard(group));
}

/** Throws when the app serves a /v1 route outside every route group: one that no check would guard. */
export function assertRoutesGuarded(app: Hono<AppEnv>): void {
  const unguarded = app.routes.filter(
    (route) =>
      route.path.startsWith('/v1/') &&
      route.path !== '/v1/*' &&
      !routeGroups.some((group) => covers(group.pattern, route.path)),
  );
  if (unguarded.length > 0) {
    throw new Error(
      `routes outside every route group of route-access.ts: ${unguarded.map((route) => `${route.method} ${route.path}`).join(', ')}`,
    );
  }
}

/** Refuses a key whose role is not among `roles`, saying what the action needs. */
export function assertRole(key: ApiKey, roles: readonly KeyRole[], action?: string): void {
  if (roles.includes(key.role)) return;
  const needs = `a key with the role ${roles.join(' or ')}`;
  throw new ToolError(
    'forbidden',
    action === undefined
      ? `This route needs ${needs}; this key has the role ${key.role}.`
      : `${action} needs ${needs}; this key has the role ${key.role}.`,
    {
      role: key.role,
    },
  );
}

/**
 * Routes that rewrite many files at once (restore, import, an archive) need a key that may already
 * do that unasked: one whose allowlist and policy let write_file and apply_patch run without approval.
 */
export function assertMayRewrite(tools: Pick<ToolRegistry, 'get'>, key: ApiKey, what: string): void {
  for (const name of ['write_file', 'apply_patch']) {
    const tool = tools.get(name);
    if (!toolAllowed(key, tool, undefined) || approvalDecision(key, tool, undefined) !== 'allow') {
      throw new ToolError(
        'forbidden',
        `To ${what}, a key must be allowed to call write_file and apply_patch without approval; this key's ${name} is not. Ask an approver or admin.`,
        {
          tool: name,
        },
      );
    }
  }
}

/** A workspace outside the key's scope answers exactly as an absent one does. */
export function assertWorkspaceVisible(key: ApiKey, workspace: string): void {
  if (!canSeeWorkspace(key, workspace)) {
    throw new ToolError(
      'not_found',
      `Workspace ${workspace} does not exist; create it with PUT /v1/workspaces/${workspace}.`,
      { workspace },
    );
  }
}

/** Webhook deliveries (exactly POST /v1/hooks/{hookId}) are authenticated by their signature alone. */
export function isHookDelivery(method: string, path: string): boolean {
  return method === 'POST' && /^\/v1\/hooks\/[^/]+$/.test(path);
}

function groupGuard(group: RouteGroup): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (isHookDelivery(c.req.method, c.req.path)) return next();
    const key = c.get('key');
    assertRole(key, group.roles);
    if (group.scoped) assertWorkspaceVisible(key, c.req.param('ws') ?? '');
    await next();
  };
}

/** Whether a route path lies under a group pattern, comparing whole segments (`:ws` must be spelled so). */
function covers(pattern: string, path: string): boolean {
  if (!pattern.endsWith('/*')) return path === pattern;
  const base = pattern.slice(0, -2);
  return path === base || path.startsWith(`${base}/`);
}

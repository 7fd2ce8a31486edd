// Tool routes: call a tool in a workspace, and list the tools in each ecosystem's format.
import { Hono } from 'hono';
import { formatTools } from '../tools/tool-formats.ts';
import type { AppDeps, AppEnv } from './app.ts';
import { assertRole, assertWorkspaceVisible } from './auth.ts';
import { readJsonBody } from './json-body.ts';

const userRoles = ['agent', 'approver', 'admin'] as const;

export function toolRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.get('/tools', (c) => c.json(formatTools(deps.tools.list(), c.req.query('format') ?? 'jsonschema')));

  routes.post('/workspaces/:ws/tools/:tool', async (c) => {
    const id = c.req.param('ws');
    const key = c.get('key');
    assertRole(key, userRoles);
    assertWorkspaceVisible(key, id);
    const name = c.req.param('tool');
    deps.tools.get(name);
    const args = await readJsonBody(c.req.raw, deps.limits.maxBodyBytes);
    const workspace = deps.workspaces.open(id);
    const result = await deps.tools.call(name, args, { workspace, limits: deps.limits, processes: deps.processes });
    return c.json({ result });
  });

  return routes;
}

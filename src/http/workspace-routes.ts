// Workspace routes: create/confirm, describe, delete, and list files.
import { Hono } from 'hono';
import { workspaceSettings } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';
import { parseInput } from '../contract/parse-input.ts';
import { assertWorkspaceId } from '../workspace/workspaces.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readJsonBody } from './json-body.ts';
import { assertRole } from './route-access.ts';

export function workspaceRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  // Any key in scope may create a workspace or confirm it; changing an existing one's settings
  // (they bound what its keys may write) and deleting it need an admin key.
  routes.put('/workspaces/:ws', async (c) => {
    const id = c.req.param('ws');
    const key = c.get('key');
    assertWorkspaceId(id);
    const body = await readJsonBody(c.req.raw, deps.limits.maxBodyBytes, { optional: true });
    const settings = parseInput(workspaceSettings, body ?? {}, 'workspace settings');
    const { created, info } = deps.workspaces.create(id, settings, {
      beforeSettingsChange: () =>
        assertRole(key, ['admin'], `Changing the settings of workspace ${id} (PUT without a body confirms it)`),
    });
    return c.json(info, created ? 201 : 200);
  });

  routes.get('/workspaces/:ws', (c) => {
    const id = c.req.param('ws');
    const info = deps.workspaces.info(id);
    if (!info)
      throw new ToolError('not_found', `Workspace ${id} does not exist; create it with PUT /v1/workspaces/${id}.`, {
        workspace: id,
      });
    return c.json(info);
  });

  routes.delete('/workspaces/:ws', async (c) => {
    const id = c.req.param('ws');
    if (!deps.workspaces.info(id))
      throw new ToolError('not_found', `Workspace ${id} does not exist.`, { workspace: id });
    assertRole(c.get('key'), ['admin'], `Deleting workspace ${id}`);
    if (!(await deps.workspaces.delete(id))) {
      throw new ToolError('not_found', `Workspace ${id} does not exist.`, { workspace: id });
    }
    deps.processes?.deleteWorkspace(id);
    return c.body(null, 204);
  });

  routes.get('/workspaces/:ws/files', async (c) => {
    const id = c.req.param('ws');
    const recursive = parseBoolean(c.req.query('recursive'), 'recursive');
    const prefix = c.req.query('prefix') ?? '';
    const workspace = deps.workspaces.open(id);
    const resolved = await workspace.resolve(prefix, 'read', { directory: true });
    const entry = resolved.entry;
    if (!entry) throw new ToolError('not_found', `${prefix} does not exist.`, { path: prefix });
    if (entry.type !== 'dir') {
      throw new ToolError('invalid_argument', `${prefix} is a file, not a directory; read it with read_file.`, {
        path: prefix,
      });
    }
    return c.json({ entries: workspace.list(resolved.path, recursive) });
  });

  return routes;
}

function parseBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ToolError('invalid_argument', `${name} must be "true" or "false".`, { [name]: value });
}

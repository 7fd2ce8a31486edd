// History routes: checkpoints, the diff from one to now (or to another), restore, and import from a git remote.
import { Hono } from 'hono';
import { checkpointInput, checkpointsQuery, importInput, restoreInput } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';
import type { WorkspaceHistory } from '../history/workspace-history.ts';
import { parseInput } from '../contract/parse-input.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readJsonBody } from './json-body.ts';
import { assertMayRewrite } from './route-access.ts';

export type HistoryRouteDeps = Pick<AppDeps, 'workspaces' | 'tools' | 'limits'> & { history: WorkspaceHistory };

export function historyRoutes(deps: HistoryRouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.post('/workspaces/:ws/checkpoints', async (c) => {
    const workspace = deps.workspaces.open(c.req.param('ws'));
    const body = parseInput(
      checkpointInput,
      (await readJsonBody(c.req.raw, deps.limits.maxBodyBytes, { optional: true })) ?? {},
      'checkpoint',
    );
    return c.json(await deps.history.checkpoint(workspace, body.message), 201);
  });

  routes.get('/workspaces/:ws/checkpoints', (c) => {
    const workspace = deps.workspaces.open(c.req.param('ws'));
    const query = parseInput(checkpointsQuery, c.req.query(), 'query');
    return c.json({ checkpoints: deps.history.list(workspace, query.limit) });
  });

  routes.get('/workspaces/:ws/diff', async (c) => {
    const workspace = deps.workspaces.open(c.req.param('ws'));
    const from = c.req.query('from');
    if (from === undefined)
      throw new ToolError('invalid_argument', 'Name the checkpoint to diff from: GET .../diff?from=<checkpoint id>.', {
        field: 'from',
      });
    const to = c.req.query('to');
    return c.json({ diff: await deps.history.diff(workspace, from, to === '' ? undefined : to) });
  });

  routes.post('/workspaces/:ws/restore', async (c) => {
    const key = c.get('key');
    const workspace = deps.workspaces.open(c.req.param('ws'));
    assertMayRewrite(deps.tools, key, 'restore a checkpoint');
    const body = parseInput(restoreInput, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'restore');
    const { restored, version } = await deps.history.restore(workspace, body.checkpoint);
    return c.json({ restored, version: version ?? deps.workspaces.info(workspace.id)?.version ?? null });
  });

  routes.post('/workspaces/:ws/import', async (c) => {
    const key = c.get('key');
    const workspace = deps.workspaces.open(c.req.param('ws'));
    assertMayRewrite(deps.tools, key, 'import a repository');
    const body = parseInput(importInput, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'import');
    return c.json(await deps.history.import(workspace, body.git), 201);
  });

  return routes;
}

// Workspace routes: create/confirm, describe, delete, and list files.
import { fromBase64Url, toBase64Url } from '../core/base64.ts';
import { Hono } from 'hono';
import { forkRequest, workspaceSettings } from '../contract/http-requests.ts';
import { canSeeWorkspace } from '../keys/key-store.ts';
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

  // A fork is a new workspace: the key's scope must hold it too, checked before anything is
  // looked up, so a key learns nothing of workspaces outside its scope.
  routes.post('/workspaces/:ws/fork', async (c) => {
    const id = c.req.param('ws');
    const key = c.get('key');
    const { to } = parseInput(forkRequest, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'fork');
    assertWorkspaceId(to);
    if (!canSeeWorkspace(key, to))
      throw new ToolError(
        'forbidden',
        `This key's scope does not hold workspace ${to}; fork to a workspace within it.`,
        {
          workspace: to,
        },
      );
    return c.json(deps.forkWorkspace ? await deps.forkWorkspace(id, to) : deps.workspaces.fork(id, to), 201);
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
    const limit = parseLimit(c.req.query('limit'));
    const after = parseCursor(c.req.query('cursor'), resolved.path, recursive);
    const { entries, more } = workspace.list(resolved.path, recursive, { after, limit });
    const last = entries.at(-1);
    return c.json(more && last ? { entries, nextCursor: encodeCursor(last.path) } : { entries });
  });

  return routes;
}

function parseBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new ToolError('invalid_argument', `${name} must be "true" or "false".`, { [name]: value });
}

/** Entries in one page of a listing, by default and at most. */
export const MAX_LISTING_PAGE = 10_000;

function parseLimit(value: string | undefined): number {
  if (value === undefined) return MAX_LISTING_PAGE;
  const limit = /^[0-9]{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_LISTING_PAGE))
    throw new ToolError('invalid_argument', `limit must be a whole number from 1 to ${MAX_LISTING_PAGE}.`, {
      limit: value,
    });
  return limit;
}

// A cursor is the last path of the page before, base64url-encoded: opaque to clients, and a path
// rather than an offset, so entries added or removed between pages neither repeat nor hide others.
function encodeCursor(path: string): string {
  return toBase64Url(new TextEncoder().encode(path));
}

/** The path a cursor names; it must lie in the listed directory (below it, when recursive). */
function parseCursor(value: string | undefined, directory: string, recursive: boolean): string | undefined {
  if (value === undefined) return undefined;
  const refuse = () =>
    new ToolError('invalid_argument', 'cursor is not one this listing gave; pass nextCursor from the page before.', {
      cursor: value,
    });
  if (!/^[A-Za-z0-9_-]{1,8192}$/.test(value)) throw refuse();
  let path: string;
  try {
    path = new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(value));
  } catch {
    throw refuse();
  }
  const base = directory === '' ? '' : `${directory}/`;
  const rest = path.slice(base.length);
  if (!path.startsWith(base) || rest === '' || (!recursive && rest.includes('/'))) throw refuse();
  return path;
}

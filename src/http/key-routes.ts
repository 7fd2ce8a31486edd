// Key routes (admin): create keys (the secret is shown once), list them without secrets, revoke.
import { Hono } from 'hono';
import type { z } from 'zod';
import { keyInput } from '../contract/http-requests.ts';
import { bashActions } from '../contract/tool-inputs.ts';
import { ToolError } from '../core/errors.ts';
import { scopeOutside } from '../core/workspace-scope.ts';
import type { KeyAdmin } from '../keys/key-admin.ts';
import { mayManageKey, publicKey, type ApiKey } from '../keys/key-store.ts';
import { parseInput } from '../contract/parse-input.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readJsonBody } from './json-body.ts';
import { assertRole } from './route-access.ts';

export function keyRoutes(deps: Pick<AppDeps, 'limits' | 'tools'> & { keys: KeyAdmin }): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.post('/keys', async (c) => {
    const creator = c.get('key');
    assertRole(creator, ['admin'], 'Creating keys');
    const input = parseInput(keyInput, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'key');
    assertWithinScope(creator, input.workspaces);
    checkToolNames(
      input,
      deps.tools.list().map((tool) => tool.name),
    );
    const { key, secret, notifySecret } = await deps.keys.create(input);
    return c.json({ ...publicKey(key), secret, ...(notifySecret === undefined ? {} : { notifySecret }) }, 201);
  });

  routes.get('/keys', async (c) => {
    const key = c.get('key');
    // Everyone sees their own key; an admin also the keys whose scope lies within its own.
    return c.json({
      keys: (key.role === 'admin' ? (await deps.keys.list()).filter((other) => mayManageKey(key, other)) : [key]).map(
        publicKey,
      ),
    });
  });

  routes.delete('/keys/:id', async (c) => {
    const admin = c.get('key');
    assertRole(admin, ['admin'], 'Revoking keys');
    const id = c.req.param('id');
    const target = await deps.keys.get(id);
    if (!target || !mayManageKey(admin, target) || !(await deps.keys.revoke(id))) {
      throw new ToolError('not_found', `Key ${id} does not exist or is already revoked.`, { keyId: id });
    }
    return c.body(null, 204);
  });

  return routes;
}

/** A key is created within its creator's scope: an admin cannot make a key that reaches further than itself. */
function assertWithinScope(creator: ApiKey, workspaces: readonly string[]): void {
  const outside = scopeOutside(workspaces, creator.workspaces);
  if (outside.length === 0) return;
  const wants = outside.includes('*')
    ? 'every workspace ("*")'
    : `workspace${outside.length > 1 ? 's' : ''} ${outside.join(', ')}`;
  throw new ToolError(
    'forbidden',
    `This admin key may create keys only within its own scope (${creator.workspaces.join(', ')}), so not for ${wants}.`,
    { field: 'workspaces' },
  );
}

/** Tool allowlists and rules must name tools (and bash actions) that exist, so a typo never silently allows or denies. */
function checkToolNames(input: z.output<typeof keyInput>, tools: string[]): void {
  const bash = (action: string) => (bashActions as readonly string[]).includes(action);
  for (const entry of input.tools ?? []) {
    const [tool, action, ...rest] = entry.split(':');
    const known =
      rest.length === 0 && tools.includes(tool!) && (action === undefined || (tool === 'bash' && bash(action)));
    if (!known) {
      throw new ToolError(
        'invalid_argument',
        `tools: ${JSON.stringify(entry)} is not a tool; use one of ${tools.join(', ')} or bash:<action> (${bashActions.join(', ')}).`,
        { field: 'tools', value: entry },
      );
    }
  }
  for (const [index, rule] of (input.rules ?? []).entries()) {
    if (!tools.includes(rule.tool))
      throw new ToolError(
        'invalid_argument',
        `rules.${index}.tool: ${JSON.stringify(rule.tool)} is not a tool; use one of ${tools.join(', ')}.`,
        { field: `rules.${index}.tool` },
      );
    if (rule.action !== undefined && !(rule.tool === 'bash' && bash(rule.action))) {
      throw new ToolError(
        'invalid_argument',
        `rules.${index}.action: only bash has actions (${bashActions.join(', ')}).`,
        { field: `rules.${index}.action` },
      );
    }
  }
  if (
    input.role === 'runner' &&
    (input.tools !== undefined ||
      input.rules !== undefined ||
      input.approvalMode !== undefined ||
      input.quota !== undefined)
  ) {
    throw new ToolError(
      'invalid_argument',
      'A runner key serves the runner protocol only; it takes no tools, rules, approvalMode or quota.',
      { field: 'role' },
    );
  }
}

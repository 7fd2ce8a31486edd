// Tool routes: call a tool in a workspace, and list the tools in each ecosystem's format.
import { Hono } from 'hono';
import { ToolError } from '../core/errors.ts';
import { MAX_WAIT_MS } from '../approvals/approval-flow.ts';
import { formatTools } from '../tools/tool-formats.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readJsonBody } from './json-body.ts';

/** GET /tools: the tools in each ecosystem's function-calling shape. */
export function toolListRoutes(deps: Pick<AppDeps, 'tools'>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get('/tools', (c) => c.json(formatTools(deps.tools.list(), c.req.query('format') ?? 'jsonschema')));
  return routes;
}

export function toolRoutes(deps: Pick<AppDeps, 'calls' | 'limits'>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.post('/workspaces/:ws/tools/:tool', async (c) => {
    const key = c.get('key');
    const waitMs = parseWaitMs(c.req.query('waitMs'));
    const answer = await deps.calls.call({
      key,
      workspace: c.req.param('ws'),
      tool: c.req.param('tool'),
      waitMs,
      readArguments: async () => {
        let bytes = 0;
        const value = await readJsonBody(c.req.raw, deps.limits.maxBodyBytes, {
          onBytes: (received) => (bytes = received),
        });
        return { value, bytes };
      },
    });
    return new Response(answer.json, {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...answer.headers },
    });
  });

  return routes;
}

/** `?waitMs=`: how long a call that needs approval waits for the decision before answering 202. */
export function parseWaitMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const waitMs = Number(value);
  if (!/^\d+$/.test(value) || waitMs > MAX_WAIT_MS) {
    throw new ToolError('invalid_argument', `waitMs must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS}.`, {
      waitMs: value,
    });
  }
  return waitMs;
}

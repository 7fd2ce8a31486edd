// The MCP endpoint: a stateless Streamable HTTP Model Context Protocol server per workspace, whose
// tool calls take the same way as the HTTP tool route (scope, approvals, quota, metering).
import { Hono } from 'hono';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readBodyBytes } from './json-body.ts';
import { parseWaitMs } from './tool-routes.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });
let mcpServerModule: Promise<typeof import('./mcp-server.ts')> | undefined;

export function mcpRoutes(deps: AppDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.all('/workspaces/:ws/mcp', async (c) => {
    const key = c.get('key');
    // Stateless: no session outlives its POST, so there is no stream to GET and no session to DELETE.
    if (c.req.method !== 'POST') return methodNotAllowed();
    const waitMs = parseWaitMs(c.req.query('waitMs'));
    // Read within the body limit here, so an oversized message is the contract's 413 on every home.
    const bytes = await readBodyBytes(c.req.raw, deps.limits.maxBodyBytes);
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(utf8.decode(bytes));
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: the body is not UTF-8 JSON.');
    }
    const { answerMcpMessage } = await (mcpServerModule ??= import('./mcp-server.ts'));
    return answerMcpMessage(deps, key, c.req.param('ws'), waitMs, c.req.raw, parsedBody);
  });

  return routes;
}

function methodNotAllowed(): Response {
  return jsonRpcError(405, -32000, 'Method not allowed: this stateless MCP server takes POST only.', { allow: 'POST' });
}

/** A JSON-RPC error answer, as the SDK gives for failures before any message is handled. */
function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });
}

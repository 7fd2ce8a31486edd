// The API's own documentation, served without a key: the OpenAPI document and the interactive docs page.
import { Hono } from 'hono';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { docsPage } from './docs-page.ts';
import { openApiDocument, type OpenApiDocument } from './openapi.ts';

/** The page talks to its own origin only, so a key pasted into it can go nowhere else. */
const pageHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function docsRoutes(deps: Pick<AppDeps, 'tools'> & { runnerProtocol: boolean }): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  // Built on first use: the tools and routes are fixed for the app's life, and a Worker does not pay for it at start.
  let document: OpenApiDocument | undefined;

  routes.get('/openapi.json', (c) => {
    document ??= openApiDocument({ tools: deps.tools.list(), runnerProtocol: deps.runnerProtocol });
    // Nothing in it is secret, so editors and generators elsewhere may fetch it.
    return c.json(document, 200, { 'access-control-allow-origin': '*' });
  });

  routes.get('/docs', (c) => c.html(docsPage, 200, pageHeaders));

  return routes;
}

// GET /console: the web console, its script, styles and icon, served by either home with a strict CSP.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-deps.ts';
import { consoleAssetsTag, consoleScript, consoleStyle } from './console-assets.ts';
import { consoleIcon, consolePage } from './console-page.ts';

/**
 * Scripts and styles from this origin only (none inline, no eval), and calls to this origin only,
 * so a key typed into the console can go nowhere else.
 */
export const consoleCsp =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'";

const common = {
  'content-security-policy': consoleCsp,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  // The assets change with the server, which may be redeployed at any time: a browser asks each time.
  'cache-control': 'no-cache',
};

const etag = `"${consoleAssetsTag}"`;

/** The script or the styles, or 304 when the browser holds this build already. */
function asset(c: Context<AppEnv>, body: string, contentType: string): Response {
  const held = (c.req.header('if-none-match') ?? '').split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (held.includes(etag) || held.includes('*')) return c.body(null, 304, { ...common, etag });
  return c.body(body, 200, { ...common, etag, 'content-type': contentType });
}

export function consoleRoutes(): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get('/console', (c) => c.html(consolePage, 200, common));
  routes.get('/console/app.js', (c) => asset(c, consoleScript, 'text/javascript; charset=utf-8'));
  routes.get('/console/app.css', (c) => asset(c, consoleStyle, 'text/css; charset=utf-8'));
  routes.get('/console/icon.svg', (c) => c.body(consoleIcon, 200, { ...common, 'content-type': 'image/svg+xml' }));
  return routes;
}

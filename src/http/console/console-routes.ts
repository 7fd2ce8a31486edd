// GET /console: the web console, its script, styles and icon, served by either home with a strict CSP.
import { Hono } from 'hono';
import type { AppEnv } from '../app-deps.ts';
import { consoleScript, consoleStyle } from './console-assets.ts';
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
  // The assets change with the server, which may be redeployed at any time.
  'cache-control': 'no-cache',
};

export function consoleRoutes(): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get('/console', (c) => c.html(consolePage, 200, common));
  routes.get('/console/app.js', (c) =>
    c.body(consoleScript, 200, { ...common, 'content-type': 'text/javascript; charset=utf-8' }),
  );
  routes.get('/console/app.css', (c) =>
    c.body(consoleStyle, 200, { ...common, 'content-type': 'text/css; charset=utf-8' }),
  );
  routes.get('/console/icon.svg', (c) => c.body(consoleIcon, 200, { ...common, 'content-type': 'image/svg+xml' }));
  return routes;
}

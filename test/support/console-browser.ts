// The console in headless Chromium driven by playwright-core: a page that records every console error,
// page error and failed request, screenshots written under test-artifacts/ (gitignored), and axe-core's
// accessibility check of what the page shows.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from './server-process.ts';

/** CI installs Debian's chromium (.ci/run); a missing browser fails the test rather than skipping it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, page errors and failed requests seen so far, each as one line. */
  problems: string[];
}

/**
 * A page whose console errors, uncaught errors, failed requests and answers of 400 or more are
 * recorded. A stream the page itself closes (it stops following a log or leaves a view) ends as
 * `net::ERR_ABORTED`: that one is the page's own doing, not a failure.
 */
export async function watchedPage(browser: Browser, width: number): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const failure = request.failure()?.errorText ?? 'failed';
    if (failure === 'net::ERR_ABORTED' && /\/stream(\?|$)/.test(new URL(request.url()).pathname + '?')) return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${failure}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400)
      problems.push(`answer ${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return { page, problems };
}

/** Writes `<name>-<width>.png` under test-artifacts/console/<home>/. */
export async function screenshot(page: Page, home: string, name: string): Promise<void> {
  const dir = join(repoRoot, 'test-artifacts', 'console', home);
  mkdirSync(dir, { recursive: true });
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG 2.1 A and AA rules and its best practices over the page as it is now, each
 * violation as `rule: the elements`. axe is put into the page over DevTools, which the page's CSP
 * does not govern; the page itself loads nothing but its own script.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>('typeof axe !== "undefined"'))) await page.evaluate(axeSource);
  return page.evaluate<string[]>(`axe
    .run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] })
    .then((result) => result.violations.map((violation) =>
      violation.id + ': ' + violation.nodes.map((node) => node.target.join(' ')).join(', ')))`);
}

// The console in headless Chromium driven by playwright-core: a page that records every console error,
// page error and failed request, and screenshots written under test-artifacts/ (gitignored).
import { mkdirSync } from 'node:fs';
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

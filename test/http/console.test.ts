// GET /console in headless Chromium against the real server: sign in with a key, decide approvals
// as agents wait on them, follow a process's log and stop it, browse files and a checkpoint's diff,
// and see usage; the page runs under its CSP (no inline script, no eval) without a console error or
// a failed request. Screenshots of each view at 1280 and 375 px go to test-artifacts/console/<home>/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  accessibilityViolations,
  launchChromium,
  screenshot,
  watchedPage,
  type WatchedPage,
} from '../support/console-browser.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { callApi, testHome, useServer } from '../support/server-process.ts';

// Streams ask every 500 ms whether their key is still live, so a revoked key ends them soon.
const server = useServer({ env: { TOOLGATE_STREAM_KEEPALIVE_MS: '500' } });
const WS = 'console-ws';
/** How long a poll waits for what the page shows: a safety net on a loaded machine, never asserted. */
const WAIT = { timeout: 30_000 };
const OTHER = 'console-other';

let browser: Browser;
let watched: WatchedPage;
let page: Page;
let agent: TestKey;

beforeAll(async () => {
  browser = await launchChromium();
  watched = await watchedPage(browser, 1280);
  page = watched.page;
  expect((await server.call('PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
  expect((await server.call('PUT', `/v1/workspaces/${OTHER}`)).status).toBe(201);
  const written = await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, {
    path: 'src/app.txt',
    content: 'one\ntwo\nthree\n',
  });
  expect(written.status).toBe(200);
  // An agent key in safe mode: its writes wait for a person.
  agent = await createKey(server, { name: 'console-agent', role: 'agent', workspaces: [WS], approvalMode: 'safe' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

// Every step leaves the page without a console error, an uncaught error or a failed request.
afterEach(() => {
  expect(watched.problems).toEqual([]);
});

/** Screenshots of the view as it is, at 1280 px and at 375 px wide, each checked for accessibility problems. */
async function shots(name: string): Promise<void> {
  await screenshot(page, testHome, name);
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.setViewportSize({ width: 375, height: 900 });
  await screenshot(page, testHome, name);
  expect(await accessibilityViolations(page)).toEqual([]);
  // Nothing is wider than a phone's screen but what scrolls inside its own box (tables, code).
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  await page.setViewportSize({ width: 1280, height: 900 });
}

function agentCall(tool: string, args: unknown): Promise<{ status: number; body: any }> {
  return callApi(server.url, agent.secret, 'POST', `/v1/workspaces/${WS}/tools/${tool}?waitMs=60000`, args);
}

async function openView(name: 'Approvals' | 'Processes' | 'Files' | 'Usage'): Promise<void> {
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 2, name }).waitFor();
}

async function openWorkspace(name: string): Promise<void> {
  await page.getByLabel('Workspace').fill(name);
  await page.getByRole('button', { name: 'Open' }).click();
}

describe('GET /console', () => {
  it('is served with a strict CSP, holds no secret and loads nothing from elsewhere', async () => {
    const answer = await fetch(`${server.url}/console`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = answer.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toContain('unsafe-inline');
    const html = await answer.text();
    // No inline script: every script element has a src, on this origin.
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script defer src="/console/app.js">']);
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
    for (const asset of ['/console/app.js', '/console/app.css', '/console/icon.svg']) {
      const loaded = await fetch(server.url + asset);
      expect(loaded.status).toBe(200);
      expect(loaded.headers.get('content-security-policy')).toBe(csp);
      const text = await loaded.text();
      expect(text).not.toContain(server.key);
      expect(text).not.toMatch(/\bhttps?:\/\/(?!www\.w3\.org\/)/);
    }
    expect(html).not.toContain(server.key);
    // A browser that holds this build of the script is told so, without the script again.
    const script = await fetch(`${server.url}/console/app.js`);
    const etag = script.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{20}"$/);
    const again = await fetch(`${server.url}/console/app.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('signs in with a key kept in sessionStorage only, under a CSP that blocks eval', async () => {
    await page.goto(`${server.url}/console`);
    await shots('sign-in');
    // From the keyboard alone: the key field is the first stop, Enter sends the form.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('api-key');
    await page.keyboard.type(server.key);
    await page.keyboard.press('Enter');
    await page.getByText('Signed in with an admin key').waitFor();
    // The skip link is the first stop after signing in, and leads into the view.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('main');
    // Expressions as text: they run in the page, whose globals this file's types do not declare.
    const stored = await page.evaluate<{ session: string[]; local: number; cookie: string }>(`({
      session: Object.keys(sessionStorage).map((name) => sessionStorage.getItem(name)),
      local: localStorage.length,
      cookie: document.cookie,
    })`);
    expect(stored.session).toContain(server.key);
    expect(stored).toMatchObject({ local: 0, cookie: '' });
    // Strings do not become code in this page: a string handed to a code sink (made a TrustedScript,
    // which the page's require-trusted-types-for would otherwise refuse first) meets the CSP's missing
    // 'unsafe-eval'. DevTools' own evaluation is exempt from the CSP, so the probe uses setTimeout.
    const probe = await page.evaluate<string>(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (event) =>
        resolve(event.violatedDirective + ' ' + event.blockedURI),
      );
      const policy = trustedTypes.createPolicy('probe', { createScript: (text) => text });
      setTimeout(policy.createScript('document.title = "evaluated"'));
    })`);
    expect(probe).toBe('script-src eval');
    expect(await page.title()).toBe('toolgate console');
    // The browser reports the blocked probe on the console: that one error is the probe's.
    const reported = watched.problems.findIndex((problem) =>
      problem.includes("'unsafe-eval' is not an allowed source"),
    );
    expect(reported).toBeGreaterThanOrEqual(0);
    watched.problems.splice(reported, 1);
    await page.getByText('Live: nothing waits').waitFor();
    await shots('sign-in-done');
  });

  it("shows a safe-mode agent's apply_patch live as a diff against the file; approving it answers the waiting call", async () => {
    const waiting = agentCall('apply_patch', {
      patch: '*** Begin Patch\n*** Update File: src/app.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n',
    });
    const card = page.locator('article[data-approval]', { hasText: 'apply_patch' });
    await card.waitFor();
    await expect.poll(() => card.locator('.diff-del').allTextContents(), WAIT).toContain('-two\n');
    expect(await card.locator('.diff-add').allTextContents()).toContain('+TWO\n');
    await expect.poll(() => card.textContent(), WAIT).toContain('console-agent');
    expect(await card.textContent()).toContain(WS);
    await shots('approvals');
    await card.getByRole('button', { name: 'Approve' }).click();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.result.summary).toBe('M src/app.txt');
    await expect.poll(() => card.locator('.status').textContent(), WAIT).toBe('approved');
    expect(await card.locator('.outcome').textContent()).toBe('ran');
    const read = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'src/app.txt' });
    expect(read.body.result.content).toBe('one\nTWO\nthree\n');
  });

  it('rejects a call with a reason; the waiting agent gets approval_rejected', async () => {
    const waiting = agentCall('bash', { action: 'exec', command: 'rm -rf src' });
    const card = page.locator('article[data-approval]', { hasText: 'rm -rf src' });
    await card.waitFor();
    expect(await card.locator('pre.command').textContent()).toBe('rm -rf src');
    await card.getByLabel('Reason (optional)').fill('not in this workspace');
    // From the keyboard: the reason, then Approve, then Reject.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Reject');
    await page.keyboard.press('Enter');
    const answer = await waiting;
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe('approval_rejected');
    expect(answer.body.error.message).toBe('[approval-rejected] not in this workspace');
    await expect.poll(() => card.locator('.status').textContent(), WAIT).toBe('rejected');
  });

  it("follows a started process's log as it prints, sends it a line on stdin, and stops it", async () => {
    const started = await server.call('POST', `/v1/workspaces/${WS}/tools/bash`, {
      action: 'start',
      command: 'echo ready; while read line; do echo "got:$line"; done',
    });
    expect(started.status).toBe(200);
    const processId = started.body.result.processId as string;
    await openView('Processes');
    await openWorkspace(WS);
    await page.getByRole('button', { name: /while read line/ }).click();
    const log = page.getByRole('log', { name: 'Process output' });
    await expect.poll(() => log.textContent(), WAIT).toContain('ready');
    await expect.poll(() => page.locator('.process-status').textContent(), WAIT).toBe('running');
    // A line written now is printed now: the tail shows it without a reload.
    await page.getByLabel('Standard input (sent as one line)').fill('hello console');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => log.textContent(), WAIT).toContain('got:hello console');
    await shots('processes');
    await page.getByRole('button', { name: 'Stop process' }).click();
    await expect.poll(() => page.locator('.process-status').textContent(), WAIT).toBe('stopped');
    // The list above shows the same status.
    await expect.poll(() => page.locator('.process-table td.status').allTextContents(), WAIT).toEqual(['stopped']);
    const status = await server.call('POST', `/v1/workspaces/${WS}/tools/bash`, { action: 'status', processId });
    expect(status.body.result.status).toBe('stopped');
    // A command started from the console is followed at once, to its end.
    await page.getByLabel('Start a command').fill('echo from-the-console');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await expect.poll(() => log.textContent(), WAIT).toContain('from-the-console');
    await expect.poll(() => page.locator('.process-status').textContent(), WAIT).toBe('exited');
  });

  it('browses to a file and shows the diff from a checkpoint to now', async () => {
    await openView('Files');
    await openWorkspace(WS);
    await page.getByLabel('Message').fill('before the edit');
    await page.getByRole('button', { name: 'Make a checkpoint' }).click();
    await page.locator('.checkpoint-message', { hasText: 'before the edit' }).waitFor();
    const edited = await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, {
      path: 'src/app.txt',
      content: 'one\nTWO\nthree\nfour\n',
    });
    expect(edited.status).toBe(200);
    await page.getByRole('button', { name: 'src/' }).click();
    await page.getByRole('button', { name: 'app.txt' }).click();
    await expect
      .poll(() => page.getByLabel('Contents of src/app.txt').textContent(), WAIT)
      .toBe('one\nTWO\nthree\nfour\n');
    await page.getByRole('button', { name: 'Diff to now: before the edit' }).click();
    const diff = page.getByLabel('Changes since before the edit');
    await expect.poll(() => diff.locator('.diff-add').allTextContents(), WAIT).toContain('+four\n');
    // Between two checkpoints: the one before the edit and one made after it.
    await page.getByLabel('Message').fill('after the edit');
    await page.getByRole('button', { name: 'Make a checkpoint' }).click();
    await page.locator('.checkpoint-message', { hasText: 'after the edit' }).waitFor();
    await page.getByLabel('Compare').selectOption({ label: 'before the edit' });
    await page.getByLabel('with').selectOption({ label: 'after the edit' });
    await page.getByRole('button', { name: 'Show the diff' }).click();
    const between = page.getByLabel('Changes from before the edit to after the edit');
    await expect.poll(() => between.locator('.diff-add').allTextContents(), WAIT).toEqual(['+four\n']);
    await shots('files');
    // Restore asks first; accepted, the file is as it was at the checkpoint.
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Restore: before the edit' }).click();
    await page.getByText('Restored to').waitFor();
    const read = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'src/app.txt' });
    expect(read.body.result.content).toBe('one\nTWO\nthree\n');
  });

  it('charts usage per tool and day, and per key for an admin', async () => {
    await openView('Usage');
    const bars = page.locator('figure.chart rect title');
    await expect
      .poll(() => bars.allTextContents())
      .toEqual(expect.arrayContaining([expect.stringMatching(/apply_patch: 1 calls$/)]));
    await expect.poll(() => page.locator('table.key-usage').textContent(), WAIT).toContain('console-agent');
    await shots('usage');
  });

  it('a key scoped to another workspace sees none of these approvals', async () => {
    const pending = await callApi(server.url, agent.secret, 'POST', `/v1/workspaces/${WS}/tools/write_file`, {
      path: 'later.txt',
      content: 'x',
    });
    expect(pending.status).toBe(202);
    const otherAgent = await createKey(server, { name: 'other-agent', role: 'agent', workspaces: [OTHER] });
    const theirs = await otherAgent.call('POST', `/v1/workspaces/${OTHER}/tools/write_file`, {
      path: 'theirs.txt',
      content: 'y',
    });
    expect(theirs.status).toBe(202);
    const approver = await createKey(server, { name: 'other-approver', role: 'approver', workspaces: [OTHER] });
    const scoped = await watchedPage(browser, 1280);
    try {
      await scoped.page.goto(`${server.url}/console`);
      await scoped.page.getByLabel('API key').fill(approver.secret);
      await scoped.page.getByRole('button', { name: 'Sign in' }).click();
      await scoped.page.getByText('Signed in as other-approver').waitFor();
      await scoped.page.locator('article[data-approval]', { hasText: 'theirs.txt' }).waitFor();
      expect(await scoped.page.locator('article[data-approval]').count()).toBe(1);
      // An approver may not list keys; the approval itself names the key that asked.
      expect(await scoped.page.locator('article[data-approval]').textContent()).toContain('other-agent');
      // A write_file is shown as the diff it would make: here a new file.
      await expect
        .poll(() => scoped.page.locator('article[data-approval] .diff-add').allTextContents(), WAIT)
        .toEqual([expect.stringMatching(/^\+y/)]);
      expect(await scoped.page.locator('main').textContent()).not.toContain(WS);
      expect(scoped.problems).toEqual([]);
      // Typing the other workspace's name gets the API's answer for a workspace out of scope: absent.
      await scoped.page.getByRole('link', { name: 'Files' }).click();
      await scoped.page.getByLabel('Workspace').fill(WS);
      await scoped.page.getByRole('button', { name: 'Open' }).click();
      await scoped.page.getByText(`not_found: Workspace ${WS} does not exist`).first().waitFor();
      expect(await scoped.page.locator('main').textContent()).not.toContain('app.txt');
      // The only failures are those refusals (and the browser's console lines about them).
      expect(scoped.problems.length).toBeGreaterThan(0);
      for (const problem of scoped.problems)
        expect(problem).toMatch(new RegExp(`^answer 404: GET .*/v1/workspaces/${WS}/|^console error: .* 404`));
      // Revoked while the console follows approvals, the key's stream ends and the page says so,
      // rather than asking again.
      await scoped.page.getByRole('link', { name: 'Approvals' }).click();
      await scoped.page.getByText(/^Live:/).waitFor();
      expect((await server.call('DELETE', `/v1/keys/${approver.id}`)).status).toBe(204);
      await scoped.page.getByText('Not live: the server refused this key').waitFor();
      expect(await scoped.page.locator('main').textContent()).toContain('unauthorized');
    } finally {
      await scoped.page.context().close();
    }
  });
});

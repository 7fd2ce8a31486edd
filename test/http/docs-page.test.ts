// GET /docs in a real browser: the page renders every operation of /openapi.json, and "try it" sends calls with the pasted key.
import { describe, expect, it } from 'vitest';
import { dumpDom, openPage, textOf, type BrowserPage } from '../support/chromium.ts';
import { eventually } from '../support/eventually.ts';
import { callApi, useServer } from '../support/server-process.ts';

const server = useServer();

interface Shown {
  status: string;
  body: string;
}

/** Fills an operation's "try it" form as a user would, sends it, and answers what the page shows. */
async function tryIt(page: BrowserPage, operation: string, fields: Record<string, string>): Promise<Shown> {
  const op = `document.querySelector(${JSON.stringify(`[data-operation="${operation}"]`)})`;
  await page.evaluate(`(() => {
    const op = ${op};
    op.open = true;
    op.querySelector('.result .status').textContent = '';
    for (const [name, value] of Object.entries(${JSON.stringify(fields)})) op.querySelector('form.try').elements.namedItem(name).value = value;
    op.querySelector('form.try button[type=submit]').click();
  })()`);
  const shown = () =>
    page.evaluate<Shown>(
      `(() => ({ status: ${op}.querySelector('.result .status').textContent, body: ${op}.querySelector('.result .body').textContent }))()`,
    );
  return eventually(
    async () => {
      const now = await shown();
      return now.status !== '' && now;
    },
    { what: `the page to show the answer to ${operation}`, intervalMs: 50 },
  );
}

function setKey(page: BrowserPage, key: string): Promise<void> {
  return page.evaluate(`void (document.getElementById('key').value = ${JSON.stringify(key)})`);
}

describe('GET /docs', () => {
  it('is one self-contained page, served without a key, that may talk to its own origin only', async () => {
    const answer = await fetch(`${server.url}/docs`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(answer.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await answer.text();
    // Nothing is loaded from elsewhere: no CDN, no external script, style or font.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(/);
  });

  it('lists every operation of /openapi.json, grouped by tag, with its parameters, request schema and responses', async () => {
    const doc = (await callApi(server.url, undefined, 'GET', '/openapi.json')).body;
    const dom = await dumpDom(`${server.url}/docs`);
    const text = textOf(dom);
    expect(text).not.toContain('Loading openapi.json');
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toContain('POST /v1/workspaces/{ws}/tools/read_file');
    for (const operation of operations) expect(text).toContain(operation);
    // Grouped: each tag is a section holding its operations.
    for (const tag of doc.tags as { name: string }[]) expect(dom).toContain(`<section id="tag-${tag.name}">`);
    const tools = dom.slice(
      dom.indexOf('<section id="tag-tools">'),
      dom.indexOf('</section>', dom.indexOf('<section id="tag-tools">')),
    );
    expect(textOf(tools)).toContain('POST /v1/workspaces/{ws}/tools/apply_patch');
    expect(textOf(tools)).not.toContain('POST /v1/keys');
    // read_file's parameters, its request schema (the tool's own JSON Schema) and its responses.
    const readFile = textOf(
      dom.slice(
        dom.indexOf('data-operation="POST /v1/workspaces/{ws}/tools/read_file"'),
        dom.indexOf('data-operation="POST /v1/workspaces/{ws}/tools/write_file"'),
      ),
    );
    expect(readFile).toContain('waitMs');
    expect(readFile).toContain('"maxChars": {');
    expect(readFile).toContain('First line to return, 1-based (default 1).');
    for (const status of ['200', '202', '400', '401', '403', '404', '415', '429']) expect(readFile).toContain(status);
    expect(readFile).toContain('binary_file');
  });

  it('sends a call with the pasted key and shows the status and the body ("try it")', async () => {
    const page = await openPage(`${server.url}/docs`);
    try {
      await eventually(() => page.evaluate<boolean>(`document.querySelector('[data-operation]') !== null`), {
        what: 'the page to render its operations',
        intervalMs: 50,
      });

      // Without a key the page shows the contract's 401, as any client would get it.
      const refused = await tryIt(page, 'GET /v1/workspaces/{ws}', { ws: 'from-docs' });
      expect(refused.status).toMatch(/^401 /);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unauthorized' } });

      await setKey(page, server.key);
      const created = await tryIt(page, 'PUT /v1/workspaces/{ws}', { ws: 'from-docs', body: '' });
      expect(created.status).toMatch(/^201 /);
      expect(JSON.parse(created.body)).toMatchObject({ id: 'from-docs', files: 0 });

      // A tool call with a JSON body typed into the form lands in the workspace.
      const written = await tryIt(page, 'POST /v1/workspaces/{ws}/tools/write_file', {
        ws: 'from-docs',
        body: JSON.stringify({ path: 'notes/hello.txt', content: 'hi from the docs page\n' }),
      });
      expect(written.status).toMatch(/^200 /);
      expect(JSON.parse(written.body)).toMatchObject({ result: { resolvedPath: 'notes/hello.txt', created: true } });
      const read = await server.call('POST', '/v1/workspaces/from-docs/tools/read_file', { path: 'notes/hello.txt' });
      expect(read.body.result.content).toBe('hi from the docs page\n');

      // Query parameters are sent too.
      const listed = await tryIt(page, 'GET /v1/workspaces/{ws}/files', { ws: 'from-docs', prefix: 'notes' });
      expect(JSON.parse(listed.body)).toMatchObject({ entries: [{ path: 'notes/hello.txt', type: 'file' }] });
    } finally {
      await page.close();
    }
  });
});

// docs/api.md Egress over real HTTP: imports and approval notices aimed at loopback, private, link-local
// or unspecified addresses (in any spelling, by name, or through a redirect) are refused with 403
// before any connection, and a listed host is reached.
import { lookup } from 'node:dns/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createKey } from '../support/keys.ts';
import { startNoticeReceiver, type NoticeReceiver } from '../support/notice-receiver.ts';
import { testHome, useServer } from '../support/server-process.ts';

// 127.0.0.2 serves the redirect, 127.0.0.3 receives allowed notices; nothing else on loopback is allowed.
const server = useServer({
  env: { TOOLGATE_EGRESS_ALLOW_HOSTS: '127.0.0.2/32, 127.0.0.3', TOOLGATE_IMPORT_TIMEOUT_MS: '5000' },
});

const WS = 'egress';
/** Every connection made to the loopback port the refused URLs name, on 127.0.0.1 and ::1. */
let connections = 0;
let port = 0;
const listeners: (TcpServer | HttpServer)[] = [];
let redirector: { url: string; requests: string[] };
let receiver: NoticeReceiver;

async function listen<T extends TcpServer | HttpServer>(server: T, host: string, at = 0): Promise<T> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, host, () => resolve());
  });
  listeners.push(server);
  return server;
}

/** A name other than localhost that this machine resolves to loopback (its own host name, usually), if it has one. */
async function loopbackName(): Promise<string | undefined> {
  const name = hostname();
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.length > 0 && addresses.every((entry) => /^127\.|^::1$/.test(entry.address)) ? name : undefined;
  } catch {
    return undefined;
  }
}

const LOOPBACK_NAME = await loopbackName();

beforeAll(async () => {
  const counting = () =>
    createTcpServer((socket) => {
      connections += 1;
      socket.destroy();
    });
  port = ((await listen(counting(), '127.0.0.1')).address() as AddressInfo).port;
  await listen(counting(), '::1', port);

  const requests: string[] = [];
  const redirecting = createHttpServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    request.resume();
    response.writeHead(302, { location: `http://127.0.0.1:${port}${request.url}` }).end();
  });
  redirector = {
    url: `http://127.0.0.2:${((await listen(redirecting, '127.0.0.2')).address() as AddressInfo).port}`,
    requests,
  };

  receiver = await startNoticeReceiver('127.0.0.3');
  listeners.push(receiver.server);

  expect((await server.call('PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
});

afterAll(async () => {
  for (const listener of listeners) {
    if ('closeAllConnections' in listener) listener.closeAllConnections();
    await new Promise((resolve) => listener.close(resolve));
  }
});

/** An import, answered within 2 s: a refusal never waits on the network. */
async function importFrom(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/workspaces/${WS}/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ git: { url } }),
    signal: AbortSignal.timeout(2000),
  });
  return { status: response.status, body: await response.json() };
}

async function expectNothingImported(): Promise<void> {
  expect((await server.call('GET', `/v1/workspaces/${WS}/files?recursive=true`)).body.entries).toEqual([]);
  expect((await server.call('GET', `/v1/workspaces/${WS}/checkpoints`)).body.checkpoints).toEqual([]);
}

describe('import refuses addresses the egress rule blocks, before connecting', () => {
  it.each([
    ['loopback', () => `http://127.0.0.1:${port}/repo.git`, '127.0.0.1'],
    ['IPv6 loopback', () => `http://[::1]:${port}/repo.git`, '::1'],
    ['IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${port}/repo.git`, '::ffff:7f00:1'],
    ['loopback written short (127.1)', () => `http://127.1:${port}/repo.git`, '127.0.0.1'],
    ['loopback written as one number', () => `http://2130706433:${port}/repo.git`, '127.0.0.1'],
    ['a private address', () => 'http://10.0.0.1/repo.git', '10.0.0.1'],
    ['the metadata address (link-local)', () => 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['the unspecified address', () => `http://0.0.0.0:${port}/repo.git`, '0.0.0.0'],
    ['localhost', () => `http://localhost:${port}/repo.git`, 'localhost'],
  ])('%s', async (_what, url, host) => {
    const answer = await importFrom(url());
    // The URL as answers show it: WHATWG URL's normal form (127.1 is 127.0.0.1 there).
    expect(answer, JSON.stringify(answer.body)).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden', details: { url: new URL(url()).href } } },
    });
    expect(answer.body.error.message).toContain(host);
    expect(answer.body.error.message).toContain('TOOLGATE_EGRESS_ALLOW_HOSTS');
    await expectNothingImported();
    expect(connections).toBe(0);
  });

  it('names the URL without its credentials', async () => {
    const answer = await importFrom(`http://alice:s3cret@127.0.0.1:${port}/repo.git`);
    expect(answer).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden', details: { url: `http://127.0.0.1:${port}/repo.git` } } },
    });
    expect(JSON.stringify(answer.body)).not.toContain('s3cret');
    expect(connections).toBe(0);
  });

  // Skipped on the Worker, which has no DNS step (Cloudflare resolves names on its own network),
  // and on a host whose own name does not resolve to loopback (Debian's /etc/hosts makes it so).
  it.skipIf(testHome === 'worker' || LOOPBACK_NAME === undefined)(
    `a name that resolves to loopback (${LOOPBACK_NAME ?? 'none here'})`,
    async () => {
      const name = LOOPBACK_NAME!;
      const answer = await importFrom(`http://${name}:${port}/repo.git`);
      expect(answer, JSON.stringify(answer.body)).toMatchObject({
        status: 403,
        body: {
          error: {
            code: 'forbidden',
            details: { url: `http://${name}:${port}/repo.git`, address: expect.stringMatching(/^127\.|^::1$/) },
          },
        },
      });
      expect(answer.body.error.message).toContain(`${name}, which resolves to`);
      await expectNothingImported();
      expect(connections).toBe(0);
    },
  );

  it('a redirect from an allowed host to loopback: the allowed host is asked, the loopback one never', async () => {
    const answer = await importFrom(`${redirector.url}/repo.git`);
    expect(answer, JSON.stringify(answer.body)).toMatchObject({
      status: 403,
      body: { error: { code: 'forbidden', details: { url: `${redirector.url}/repo.git`, address: '127.0.0.1' } } },
    });
    expect(answer.body.error.message).toContain(`redirects to http://127.0.0.1:${port}/repo.git/info/refs`);
    expect(redirector.requests).toEqual(['GET /repo.git/info/refs?service=git-upload-pack']);
    await expectNothingImported();
    expect(connections).toBe(0);
  });
});

describe('approval notices', () => {
  const pendingWrite = async (notifyUrl: string) => {
    const key = await createKey(server, { role: 'agent', workspaces: [WS], notifyUrl });
    const pending = await key.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'held.txt', content: 'x' });
    expect(pending.status, JSON.stringify(pending.body)).toBe(202);
    return pending.body.approval.id as string;
  };

  it('never connect to a loopback notify URL, nor follow an allowed host redirecting there; an allowed host gets its notice', async () => {
    const refused = await pendingWrite(`http://127.0.0.1:${port}/hook`);
    // The refusal is logged once, with no retry: that is the event to wait for.
    await eventually(
      () =>
        server.output().includes(`the approval notice ${refused} was not sent: toolgate does not connect to 127.0.0.1`),
      { what: 'the refusal in the log' },
    );
    // The notice to the redirecting host is sent and its redirect answered, not followed.
    const redirected = await pendingWrite(`${redirector.url}/hook`);
    await eventually(() => redirector.requests.includes('POST /hook'), { what: 'the notice at the redirecting host' });
    const allowed = await pendingWrite(`${receiver.url}/hook`);
    await eventually(() => receiver.notices.length > 0, { what: 'the notice at the allowed host' });
    expect(receiver.notices.map((notice) => notice.headers['x-toolgate-delivery'])).toEqual([allowed]);
    expect(JSON.parse(receiver.notices[0]!.body)).toMatchObject({
      type: 'approval.created',
      approval: { id: allowed },
    });
    expect(redirected).not.toBe(refused);
    expect(connections).toBe(0);
  });
});

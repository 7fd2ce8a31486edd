// A real smart-HTTP git server on loopback for tests: Debian's git http-backend run as CGI behind a small Node HTTP server.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HTTP_BACKEND = '/usr/lib/git-core/git-http-backend';

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`: a repository `<root>/x.git` is at `${url}/x.git`. */
  url: string;
  close(): Promise<void>;
}

export interface GitHttpOptions {
  /** The directory holding the bare repositories served. */
  root: string;
  /** When set, every request needs HTTP basic auth with this `user:password`, else 401. */
  basicAuth?: string;
}

export async function startGitHttpServer(options: GitHttpOptions): Promise<GitHttpServer> {
  const server = createServer((request, response) => {
    if (
      options.basicAuth !== undefined &&
      request.headers.authorization !== `Basic ${Buffer.from(options.basicAuth).toString('base64')}`
    ) {
      response
        .writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' })
        .end('authentication required\n');
      return;
    }
    runBackend(options.root, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => close(server) };
}

function runBackend(root: string, request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    HOME: root,
    PATH_INFO: decodeURIComponent(url.pathname),
    REQUEST_METHOD: request.method ?? 'GET',
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    GATEWAY_INTERFACE: 'CGI/1.1',
  };
  if (request.headers['content-length'] !== undefined) env.CONTENT_LENGTH = request.headers['content-length'];
  if (request.headers['content-encoding'] !== undefined)
    env.HTTP_CONTENT_ENCODING = request.headers['content-encoding'];
  if (request.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(request.headers['git-protocol']);
  const cgi = spawn(HTTP_BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  request.pipe(cgi.stdin);
  cgi.stderr.resume();
  let head = Buffer.alloc(0);
  let headersDone = false;
  cgi.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    const endLf = head.indexOf('\n\n');
    const cut = end !== -1 ? { at: end, length: 4 } : endLf !== -1 ? { at: endLf, length: 2 } : undefined;
    if (!cut) return;
    headersDone = true;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, cut.at).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon === -1) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    response.writeHead(status, headers);
    response.write(head.subarray(cut.at + cut.length));
  });
  cgi.on('close', () => {
    if (!headersDone) response.writeHead(500).end('git http-backend failed\n');
    else response.end();
  });
  cgi.on('error', () => response.writeHead(500).end());
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

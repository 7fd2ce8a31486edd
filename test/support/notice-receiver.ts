// A loopback HTTP server that keeps every request it receives: where approval notices go in tests.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedNotice {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface NoticeReceiver {
  url: string;
  notices: ReceivedNotice[];
  server: Server;
  close(): Promise<void>;
}

/** Listens on `host` (a loopback address) and answers every request 200 once its body has arrived. */
export async function startNoticeReceiver(host = '127.0.0.1'): Promise<NoticeReceiver> {
  const notices: ReceivedNotice[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      notices.push({ headers: request.headers, body });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    notices,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

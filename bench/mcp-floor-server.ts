// The floor of P1b-mcp: a bare node:http server that answers each MCP method with an answer recorded
// from toolgate's own endpoint, doing no work. The official client's calls against it cost what any
// MCP server over Streamable HTTP costs that client, whatever the server does.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedMcp {
  /** The result of each method by name (initialize, tools/list, tools/call). */
  results: Record<string, unknown>;
}

/** Records the results of initialize, tools/list and one tools/call from a live MCP endpoint. */
export async function recordMcp(
  url: string,
  headers: Record<string, string>,
  call: { name: string; arguments: Record<string, unknown> },
): Promise<RecordedMcp> {
  const post = async (method: string, params: unknown): Promise<unknown> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await response.json()) as { result?: unknown; error?: unknown };
    if (body.result === undefined) throw new Error(`${method} answered ${JSON.stringify(body).slice(0, 300)}`);
    return body.result;
  };
  const initialize = await post('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'toolgate-bench', version: '1' },
  });
  return {
    results: {
      initialize,
      'tools/list': await post('tools/list', {}),
      'tools/call': await post('tools/call', call),
    },
  };
}

/** Serves the recorded answers on loopback: requests get their method's result under their own id. */
export async function serveRecordedMcp(recorded: RecordedMcp): Promise<{ url: string; server: Server }> {
  const answers = new Map(Object.entries(recorded.results).map(([method, result]) => [method, JSON.stringify(result)]));
  const server = createServer((request, response) => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method: string };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      const result = answers.get(message.method);
      const body =
        result === undefined
          ? `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"error":{"code":-32601,"message":"not recorded"}}`
          : `{"result":${result},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server };
}

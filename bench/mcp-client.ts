// An MCP client run as its own process: the official SDK Client calls one tool sequentially, one call
// after another, first for a warm-up that is not counted and then for the measured duration.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { LoadResult } from './load-client.ts';

export interface McpCallSpec {
  /** A server spawned over stdio, or a Streamable HTTP endpoint with the request headers it needs. */
  server: { stdio: { command: string; args: string[] } } | { http: { url: string; headers: Record<string, string> } };
  tool: string;
  arguments: Record<string, unknown>;
  /** What the call's structuredContent.content must be, checked on the first call. */
  expectContent: string;
  warmupMs: number;
  durationMs: number;
}

export async function runMcpCalls(spec: McpCallSpec): Promise<LoadResult> {
  let serverStderr = '';
  let transport: Transport;
  if ('stdio' in spec.server) {
    const stdio = new StdioClientTransport({ ...spec.server.stdio, stderr: 'pipe' });
    stdio.stderr?.on('data', (chunk: Buffer) => (serverStderr += chunk.toString('utf8')));
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(spec.server.http.url), {
      requestInit: { headers: spec.server.http.headers },
    });
  }
  const client = new Client({ name: 'toolgate-bench', version: '1' });
  try {
    await client.connect(transport);
    // As an agent would: list the tools first (the SDK then checks each result against its outputSchema).
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === spec.tool))
      throw new Error(`the server has no tool ${spec.tool}; it has ${tools.map((tool) => tool.name).join(', ')}`);
    const first = await client.callTool({ name: spec.tool, arguments: spec.arguments });
    const content = (first.structuredContent as { content?: unknown } | undefined)?.content;
    if (first.isError || content !== spec.expectContent)
      throw new Error(`${spec.tool} did not answer the file's content: ${JSON.stringify(first).slice(0, 500)}`);

    const run = async (durationMs: number): Promise<LoadResult> => {
      const latencies: number[] = [];
      let errors = 0;
      const started = performance.now();
      const deadline = started + durationMs;
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          const result = await client.callTool({ name: spec.tool, arguments: spec.arguments });
          if (result.isError) errors += 1;
          else latencies.push(performance.now() - t0);
        } catch {
          errors += 1;
        }
      }
      return {
        requests: latencies.length,
        errors,
        seconds: (performance.now() - started) / 1000,
        latenciesMs: latencies,
      };
    };
    await run(spec.warmupMs);
    return await run(spec.durationMs);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${serverStderr}`);
  } finally {
    await client.close();
  }
}

if (process.argv[2] === '--child') {
  const spec = JSON.parse(process.argv[3]!) as McpCallSpec;
  runMcpCalls(spec).then(
    (result) => process.stdout.write(JSON.stringify(result)),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

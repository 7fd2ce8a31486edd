// The MCP messages themselves, answered with the Model Context Protocol SDK: a stateless server and
// transport per request, and the plain tools/call that needs neither. The routes load this module on
// the first MCP request, so a server that never sees one never loads the SDK (about half a second
// of CPU at every start).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { CallAnswer } from '../core/call-answer.ts';
import type { ErrorBody } from '../core/errors.ts';
import type { ApiKey } from '../keys/key-store.ts';
import { formatTools } from '../tools/tool-formats.ts';
import type { AppDeps } from './app-deps.ts';

/** The server's name and the HTTP contract's version, as the MCP handshake reports them. */
const serverInfo = { name: 'toolgate', version: '1' };
const encoder = new TextEncoder();

/**
 * The SDK validates only elicitation answers with it, and this server never elicits: refusing
 * everything spares building an Ajv instance (and its code generation) on every request.
 */
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({
    valid: false,
    data: undefined,
    errorMessage: 'toolgate does not ask the client for input.',
  }),
};

/** Answers one MCP POST whose body parsed as JSON, as the key, on the workspace. */
export async function answerMcpMessage(
  deps: AppDeps,
  key: ApiKey,
  workspace: string,
  waitMs: number | undefined,
  request: Request,
  parsedBody: unknown,
): Promise<Response> {
  const call = plainToolCall(request.headers, parsedBody);
  if (call !== undefined) {
    // The SDK's server would answer exactly this (see plainToolCall), after building a server
    // and a transport for the request: that costs as much as a read_file itself.
    // Its result goes through the schema the SDK checks results with, as the SDK's answer does.
    const result = CallToolResultSchema.parse(await callTool(deps, key, workspace, waitMs, call.params));
    return new Response(JSON.stringify({ result, jsonrpc: '2.0', id: call.id }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }
  const server = mcpServer(deps, key, workspace, waitMs);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    await server.close();
  }
}

/** A server for one request: lists the tools as GET /v1/tools?format=mcp does, and calls them as the key. */
function mcpServer(deps: AppDeps, key: ApiKey, workspace: string, waitMs: number | undefined): Server {
  // The low-level Server lists exactly the JSON Schema the project generates; McpServer would convert the zod schemas its own way.
  const server = new Server(serverInfo, {
    capabilities: { tools: {} },
    instructions:
      `The tools act on the toolgate workspace ${workspace}; paths are relative to its root. A failed call's text starts ` +
      "with its error code; approval_pending means the call waits for a person's decision and runs by itself once approved, so do not repeat it.",
    jsonSchemaValidator: noElicitation,
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: formatTools(deps.tools.list(), 'mcp').tools as Tool[],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => callTool(deps, key, workspace, waitMs, request.params));
  return server;
}

/** One tools/call, run as the key through the same gate as the HTTP tool route. */
async function callTool(
  deps: AppDeps,
  key: ApiKey,
  workspace: string,
  waitMs: number | undefined,
  params: CallToolRequest['params'],
): Promise<CallToolResult> {
  const args = params.arguments ?? {};
  const bytes = encoder.encode(JSON.stringify(args)).byteLength;
  const answer = await deps.calls.call({
    key,
    workspace,
    tool: params.name,
    waitMs,
    readArguments: async () => ({ value: args, bytes }),
  });
  return toolResult(answer);
}

/**
 * The message when it is one plain tools/call request that the SDK's stateless transport and
 * server would take as it is, and answer with the handler's result alone: a POST that accepts
 * JSON and event streams, sends `application/json`, names a supported protocol version (or
 * none), and whose request passes the SDK's own CallToolRequestSchema without asking for a task.
 * Anything else (batches, notifications, initialize, tools/list, malformed or unusual requests)
 * goes through the SDK, which answers it, errors included, as it always has.
 */
function plainToolCall(
  headers: Headers,
  body: unknown,
): { id: string | number; params: CallToolRequest['params'] } | undefined {
  if (!isRecord(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  if (typeof body.id !== 'string' && !(typeof body.id === 'number' && Number.isInteger(body.id))) return undefined;
  const accept = headers.get('accept') ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (headers.get('content-type') !== 'application/json') return undefined;
  const version = headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const request = CallToolRequestSchema.safeParse(body);
  if (!request.success || request.data.params.task !== undefined) return undefined;
  return { id: body.id, params: request.data.params };
}

/** A call's answer as an MCP tool result: the result itself, or `isError` with the contract's code first. */
function toolResult(answer: CallAnswer): CallToolResult {
  const body = JSON.parse(answer.json) as { result?: unknown; approval?: { id: string } } & Partial<ErrorBody>;
  if (answer.status === 200) {
    const structured = isRecord(body.result) ? { structuredContent: body.result } : {};
    return { content: [{ type: 'text', text: JSON.stringify(body.result) }], ...structured };
  }
  if (body.approval) {
    const { id } = body.approval;
    const text =
      `approval_pending: This call needs an approver's decision and has not run; approval ${id} is pending. ` +
      `Once approved it runs once by itself, so do not repeat it (GET /v1/approvals/${id} shows its outcome).`;
    return { isError: true, content: [{ type: 'text', text }], structuredContent: body };
  }
  const { code, message, details } = body.error!;
  // A rejection's message already starts with the marker `[approval-rejected]` that agents look for.
  const headline = code === 'approval_rejected' ? message : `${code}: ${message}`;
  const text = details === undefined ? headline : `${headline}\ndetails: ${JSON.stringify(details)}`;
  return { isError: true, content: [{ type: 'text', text }], structuredContent: body };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The operations of the HTTP contract as the OpenAPI document lists them: one entry per route, its schemas taken from the routes.
import { z } from 'zod';
import { MAX_WAIT_MS } from '../approvals/approval-flow.ts';
import {
  approvalStatuses,
  decisionInput,
  keyInput,
  usageGroups,
  forkRequest,
  workspaceSettings,
} from '../contract/http-requests.ts';
import { toolFormats, toolResultSchemas } from '../contract/tool-answers.ts';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import { inputJsonSchema } from '../tools/tool-formats.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { archiveOperations } from './archive-operations.ts';
import { hookOperations } from './hook-operations.ts';
import { historyOperations } from './history-operations.ts';
import { callErrors, type JsonSchema, type Operation, type Parameter } from './openapi-types.ts';
import { runnerOperations } from './runner-operations.ts';
import { approvalStreamOperation, logStreamOperations } from './stream-operations.ts';

const pathErrors: ErrorCode[] = ['path_outside_workspace', 'symlink_loop', 'is_directory'];
/** The further errors of each built-in tool; a tool not named here is documented with every code. */
const toolErrors: Record<string, ErrorCode[]> = {
  read_file: [...pathErrors, 'binary_file'],
  write_file: [...pathErrors, 'path_denied', 'already_exists', 'conflict'],
  apply_patch: [...pathErrors, 'path_denied', 'binary_file', 'conflict', 'patch_invalid', 'patch_conflict'],
  bash: ['path_outside_workspace', 'symlink_loop', 'path_denied', 'conflict', 'timeout'],
  grep: ['path_outside_workspace', 'symlink_loop'],
  glob: ['path_outside_workspace', 'symlink_loop'],
};

const waitMs: Parameter = {
  name: 'waitMs',
  description: 'When the call needs approval, wait up to this long for the decision before answering 202.',
  schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS },
};

/** Every operation, in the order the document lists them; the runner protocol only where the app serves it. */
export function contractOperations(tools: readonly ToolDefinition[], runnerProtocol: boolean): Operation[] {
  return [
    ...serviceOperations(),
    ...workspaceOperations(),
    ...archiveOperations(),
    ...historyOperations(),
    ...toolOperations(tools),
    ...(runnerProtocol ? logStreamOperations() : []),
    ...accountOperations(),
    mcpOperation(),
    ...hookOperations(),
    ...(runnerProtocol ? runnerOperations() : []),
  ];
}

/** A request schema as the document states it: what a caller sends, as `inputJsonSchema` states a tool's. */
function requestJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as JsonSchema;
}

export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

function json(schema: z.ZodType): NonNullable<Operation['body']> {
  return { content: { 'application/json': requestJsonSchema(schema) }, required: true };
}

/** The component name of a tool's result schema: read_file -> ReadFileResult. */
export function resultName(tool: ToolDefinition): string {
  return `${tool.name.replace(/(^|_)(\w)/g, (_, _sep: string, letter: string) => letter.toUpperCase())}Result`;
}

function serviceOperations(): Operation[] {
  return [
    {
      method: 'get',
      path: '/healthz',
      tag: 'service',
      operationId: 'health',
      summary: 'Health: 200 once the server takes tool calls',
      public: true,
      answers: { 200: { description: 'Ready.', schema: 'Health' } },
      errors: [],
    },
    {
      method: 'get',
      path: '/openapi.json',
      tag: 'service',
      operationId: 'openApi',
      summary: 'This document',
      public: true,
      answers: { 200: { description: 'The OpenAPI 3.1 document.', schema: { type: 'object' } } },
      errors: [],
    },
    {
      method: 'get',
      path: '/docs',
      tag: 'service',
      operationId: 'docs',
      summary: 'The interactive docs page',
      public: true,
      answers: { 200: { description: 'An HTML page.', contentType: 'text/html' } },
      errors: [],
    },
    ...consoleOperations(),
  ];
}

/** The web console's page and assets: public, the same for everyone; it signs in with a key it then sends to /v1. */
function consoleOperations(): Operation[] {
  const asset = (path: string, operationId: string, summary: string, contentType: string): Operation => ({
    method: 'get',
    path,
    tag: 'service',
    operationId,
    summary,
    public: true,
    answers: { 200: { description: summary, contentType } },
    errors: [],
  });
  return [
    asset(
      '/console',
      'console',
      'The web console: sign in with a key to decide approvals, follow processes, browse files and see usage',
      'text/html',
    ),
    asset('/console/app.js', 'consoleScript', "The console's script", 'text/javascript'),
    asset('/console/app.css', 'consoleStyle', "The console's styles", 'text/css'),
    asset('/console/icon.svg', 'consoleIcon', "The console's icon", 'image/svg+xml'),
  ];
}

function workspaceOperations(): Operation[] {
  const settings = json(workspaceSettings);
  return [
    {
      method: 'put',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'putWorkspace',
      summary: 'Create or confirm a workspace',
      description:
        'The body is optional; excludedPaths are root-relative prefixes that writes and runners may not touch. Any key in scope may create a workspace or confirm one; ' +
        "changing an existing workspace's settings needs an admin key (403 forbidden, nothing changed).",
      body: { ...settings, required: false },
      answers: {
        200: { description: 'It existed.', schema: 'WorkspaceInfo' },
        201: { description: 'Created.', schema: 'WorkspaceInfo' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'payload_too_large'],
    },
    {
      method: 'post',
      path: '/v1/workspaces/{ws}/fork',
      tag: 'workspaces',
      operationId: 'forkWorkspace',
      summary: 'Fork a workspace: a new one with the same files, links, settings and checkpoints',
      description:
        'No content is copied: the fork shares it, and later changes to either never show in the other. ' +
        "The key's scope must hold both workspaces: the source (else 404) and the new one (else 403).",
      body: json(forkRequest),
      answers: { 201: { description: 'The new workspace.', schema: 'WorkspaceInfo' } },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'getWorkspace',
      summary: 'Describe a workspace',
      answers: { 200: { description: 'The workspace.', schema: 'WorkspaceInfo' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'delete',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'deleteWorkspace',
      summary: 'Delete a workspace with its files, processes and logs (admin)',
      answers: { 204: { description: 'Deleted.' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/files',
      tag: 'workspaces',
      operationId: 'listFiles',
      summary: 'List files',
      query: [
        { name: 'prefix', description: 'The directory to list (default the root).', schema: { type: 'string' } },
        {
          name: 'recursive',
          description: 'List the whole tree below it (default: direct children only).',
          schema: { type: 'string', enum: ['true', 'false'] },
        },
        {
          name: 'limit',
          description: 'At most this many entries (default and maximum 10,000).',
          schema: { type: 'integer', minimum: 1, maximum: 10_000 },
        },
        {
          name: 'cursor',
          description: 'The nextCursor of the page before: the entries after it.',
          schema: { type: 'string' },
        },
      ],
      answers: {
        200: { description: 'A page of entries, in path order; nextCursor while more remain.', schema: 'FileList' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'path_outside_workspace', 'symlink_loop'],
    },
  ];
}

function toolOperations(tools: readonly ToolDefinition[]): Operation[] {
  const list: Operation = {
    method: 'get',
    path: '/v1/tools',
    tag: 'tools',
    operationId: 'listTools',
    summary: 'List the tools in a function-calling format',
    query: [
      {
        name: 'format',
        description: 'The ecosystem whose shape to answer in (default jsonschema).',
        schema: { type: 'string', enum: [...toolFormats] },
      },
    ],
    answers: { 200: { description: 'The tools.', schema: 'ToolList' } },
    errors: ['invalid_argument'],
  };
  return [
    list,
    ...tools.map((tool): Operation => {
      const result = toolResultSchemas[tool.name] ? ref(resultName(tool)) : { type: 'object' };
      return {
        method: 'post',
        path: `/v1/workspaces/{ws}/tools/${tool.name}`,
        tag: 'tools',
        operationId: `call${resultName(tool).replace(/Result$/, '')}`,
        summary: `Call ${tool.name}`,
        description: tool.description,
        query: [waitMs],
        body: { content: { 'application/json': inputJsonSchema(tool) }, required: true },
        answers: {
          200: {
            description: 'The tool ran.',
            schema: { type: 'object', properties: { result }, required: ['result'] },
          },
          202: { description: 'The call waits for approval.', schema: 'ApprovalPending' },
        },
        errors: [...callErrors, ...(toolErrors[tool.name] ?? (Object.keys(errorStatus) as ErrorCode[]))],
      };
    }),
  ];
}

function accountOperations(): Operation[] {
  const approvalId = { id: 'The approval id.' };
  return [
    {
      method: 'get',
      path: '/v1/approvals',
      tag: 'approvals',
      operationId: 'listApprovals',
      summary: 'List approvals: an agent key sees its own calls, approvers and admins those of their workspaces',
      query: [
        {
          name: 'status',
          description: 'Only approvals in this status.',
          schema: { type: 'string', enum: [...approvalStatuses] },
        },
        {
          name: 'limit',
          description: 'At most this many (default 100).',
          schema: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      ],
      answers: { 200: { description: 'The approvals, newest first.', schema: 'ApprovalList' } },
      errors: ['invalid_argument', 'forbidden'],
    },
    approvalStreamOperation(),
    {
      method: 'get',
      path: '/v1/approvals/{id}',
      tag: 'approvals',
      operationId: 'getApproval',
      summary: 'Read an approval',
      pathParams: approvalId,
      answers: { 200: { description: 'The approval.', schema: 'Approval' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/approvals/{id}/decision',
      tag: 'approvals',
      operationId: 'decideApproval',
      summary: 'Approve (the call runs once) or reject (it never runs); approver or admin keys',
      pathParams: approvalId,
      body: json(decisionInput),
      answers: {
        200: { description: 'The approval, decided; after approve it holds the result or error.', schema: 'Approval' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
    },
    {
      method: 'post',
      path: '/v1/keys',
      tag: 'keys',
      operationId: 'createKey',
      summary: "Create a key (admin) whose scope lies within the creator's",
      body: json(keyInput),
      answers: { 201: { description: 'The key with its secret, shown this once.', schema: 'KeyCreated' } },
      errors: ['invalid_argument', 'forbidden', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/keys',
      tag: 'keys',
      operationId: 'listKeys',
      summary:
        'List keys without secrets: an admin sees the keys whose scope lies within its own, any other key itself',
      answers: { 200: { description: 'The keys.', schema: 'KeyList' } },
      errors: [],
    },
    {
      method: 'delete',
      path: '/v1/keys/{id}',
      tag: 'keys',
      operationId: 'revokeKey',
      summary: "Revoke a key at once (admin; a key whose scope lies within the admin's)",
      pathParams: { id: 'The key id.' },
      answers: { 204: { description: 'Revoked.' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/usage',
      tag: 'usage',
      operationId: 'getUsage',
      summary: "Usage of the calling key's tool calls (an admin's: every call on the workspaces in its scope)",
      query: [
        {
          name: 'from',
          description: 'ISO 8601 time or milliseconds since the epoch (default: the beginning).',
          schema: { type: 'string' },
        },
        {
          name: 'to',
          description: 'ISO 8601 time or milliseconds since the epoch (default: now).',
          schema: { type: 'string' },
        },
        {
          name: 'groupBy',
          description: 'Group rows by this (default tool; bash per action).',
          schema: { type: 'string', enum: [...usageGroups] },
        },
        { name: 'keyId', description: "Admin keys: one key's usage only.", schema: { type: 'string' } },
      ],
      answers: { 200: { description: 'Totals per group.', schema: 'Usage' } },
      errors: ['invalid_argument', 'forbidden'],
    },
  ];
}

function mcpOperation(): Operation {
  return {
    method: 'post',
    path: '/v1/workspaces/{ws}/mcp',
    tag: 'mcp',
    operationId: 'mcp',
    summary: 'Model Context Protocol (Streamable HTTP, stateless) offering the same tools',
    description:
      "Connect an MCP client (for example the SDK's StreamableHTTPClientTransport) with the same Bearer key. A failed tool call is a result " +
      'with isError: true whose text starts with the error code. Protocol errors are JSON-RPC error answers; other methods than POST answer 405.',
    query: [waitMs],
    body: { content: { 'application/json': ref('JsonRpcMessage') }, required: true },
    answers: {
      200: { description: 'The JSON-RPC answer.', schema: 'JsonRpcMessage' },
      202: { description: 'A notification or answer was accepted.' },
    },
    errors: ['invalid_argument', 'forbidden', 'payload_too_large'],
  };
}

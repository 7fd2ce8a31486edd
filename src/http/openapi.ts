// The OpenAPI 3.1 document of the HTTP contract, built from the tool registry and the zod schemas the routes validate with.
import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { WORKSPACE_ID_PATTERN } from '../workspace/workspaces.ts';
import * as answers from '../contract/http-answers.ts';
import * as runnerAnswers from '../contract/runner-protocol.ts';
import { toolResultSchemas } from '../contract/tool-answers.ts';
import { contractOperations } from './openapi-operations.ts';
import { ref, type JsonSchema, type Operation, type Parameter } from './openapi-types.ts';
import { resultName } from './tool-operations.ts';

export type OpenApiDocument = Record<string, unknown> & {
  openapi: '3.1.0';
  paths: Record<string, Record<string, Record<string, unknown>>>;
};

export interface OpenApiOptions {
  tools: readonly ToolDefinition[];
  /** The runner protocol exists only where the app has durable processes. */
  runnerProtocol: boolean;
}

const tags = [
  { name: 'service', description: 'Health, this document and the docs page; no key needed.' },
  {
    name: 'workspaces',
    description: 'Create, describe, fork, delete and list workspaces; download and upload archives.',
  },
  {
    name: 'history',
    description: 'Checkpoints as git commits, the diff from one to now, restore, and import from a git remote.',
  },
  {
    name: 'tools',
    description:
      'Call read_file, write_file, apply_patch, bash, grep and glob, and list the tools for function calling.',
  },
  { name: 'approvals', description: 'Calls that wait for a person: list, read and decide them.' },
  { name: 'keys', description: 'API keys (admin), their scope, policy and quota.' },
  { name: 'usage', description: 'Metered calls, grouped.' },
  { name: 'mcp', description: 'The Model Context Protocol endpoint of a workspace.' },
  {
    name: 'hooks',
    description: 'Webhooks: signed deliveries of patches, applied as the admin key that configured the hook.',
  },
  {
    name: 'runner',
    description:
      'The runner protocol: runners lease bash jobs of their scope and report back (keys of role runner only; reads and reports need a live lease of the same key).',
  },
];

export function openApiDocument(options: OpenApiOptions): OpenApiDocument {
  const operations = contractOperations(options.tools, options.runnerProtocol);
  const paths: OpenApiDocument['paths'] = {};
  for (const operation of operations) (paths[operation.path] ??= {})[operation.method] = pathOperation(operation);
  return {
    openapi: '3.1.0',
    info: {
      title: 'toolgate',
      version: '1',
      description:
        'A hosted tool endpoint for coding agents: read_file, write_file, apply_patch, bash, grep and glob over HTTP against named workspaces.',
    },
    tags,
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: "Authorization: Bearer <key>".' },
      },
      schemas: componentSchemas(options.tools),
    },
  };
}

function componentSchemas(tools: readonly ToolDefinition[]): Record<string, JsonSchema> {
  const named: Record<string, z.ZodType> = {
    Error: answers.errorBodySchema,
    Health: answers.healthSchema,
    WorkspaceInfo: answers.workspaceInfoSchema,
    FileList: answers.fileListSchema,
    ArchiveApplied: answers.archiveAppliedSchema,
    ToolList: answers.toolListSchema,
    Approval: answers.approvalSchema,
    ApprovalPending: answers.approvalPendingSchema,
    ApprovalList: answers.approvalListSchema,
    Key: answers.keySchema,
    KeyCreated: answers.keyCreatedSchema,
    KeyList: answers.keyListSchema,
    Usage: answers.usageSchema,
    Hook: answers.hookSchema,
    HookList: answers.hookListSchema,
    HookDeliveryAnswer: answers.hookDeliveryAnswerSchema,
    JsonRpcMessage: answers.jsonRpcMessageSchema,
    Lease: runnerAnswers.leaseAnswerSchema,
    Manifest: runnerAnswers.manifestSchema,
    Started: runnerAnswers.startedAnswerSchema,
    OutputEnd: runnerAnswers.outputAnswerSchema,
    Heartbeat: runnerAnswers.heartbeatAnswerSchema,
    Sync: runnerAnswers.syncAnswerSchema,
    Exit: runnerAnswers.exitAnswerSchema,
  };
  for (const tool of tools) {
    const result = toolResultSchemas[tool.name];
    if (result) named[resultName(tool)] = result;
  }
  return Object.fromEntries(
    Object.entries(named).map(([name, schema]) => [
      name,
      z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' }) as JsonSchema,
    ]),
  );
}

function pathOperation(operation: Operation): Record<string, unknown> {
  const parameters = [
    ...[...operation.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      in: 'path',
      required: true,
      ...pathParameter(name!, operation.pathParams),
    })),
    ...(operation.query ?? []).map((parameter) => ({ in: 'query', required: false, ...parameter })),
    ...(operation.headers ?? []).map((parameter) => ({ in: 'header', required: false, ...parameter })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(operation.answers)) {
    const media =
      answer.schema === undefined
        ? {}
        : { schema: typeof answer.schema === 'string' ? ref(answer.schema) : answer.schema };
    responses[status] = {
      description: answer.description,
      ...(answer.schema || answer.contentType
        ? { content: { [answer.contentType ?? 'application/json']: media } }
        : {}),
    };
  }
  for (const [status, codes] of errorsByStatus(operation)) {
    responses[status] = {
      description: `The error body, code ${codes.join(' or ')}.`,
      ...(status === 429
        ? {
            headers: {
              'Retry-After': { description: 'Seconds until a call is admitted again.', schema: { type: 'integer' } },
            },
          }
        : {}),
      content: { 'application/json': { schema: ref('Error') } },
    };
  }
  return {
    tags: [operation.tag],
    operationId: operation.operationId,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(operation.public ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: operation.body.required,
            content: Object.fromEntries(
              Object.entries(operation.body.content).map(([type, schema]) => [type, { schema }]),
            ),
          },
        }
      : {}),
    responses,
  };
}

function pathParameter(name: string, descriptions: Record<string, string> = {}): Parameter {
  if (name === 'ws')
    return { name, description: 'The workspace id.', schema: { type: 'string', pattern: WORKSPACE_ID_PATTERN.source } };
  return { name, description: descriptions[name] ?? `The ${name}.`, schema: { type: 'string' } };
}

function errorsByStatus(operation: Operation): [number, ErrorCode[]][] {
  const codes = new Set<ErrorCode>([
    ...operation.errors,
    ...(operation.public ? [] : (['unauthorized'] as const)),
    'internal',
  ]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(errorStatus) as ErrorCode[]) {
    if (codes.has(code)) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  }
  return [...byStatus].sort(([a], [b]) => a - b);
}

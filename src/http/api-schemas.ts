// Zod schemas of the answers the HTTP contract documents; requests are validated by the schemas beside their routes.
import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import { bashActions } from '../tools/bash.ts';

// Answers are open objects: the contract may add fields to an answer, never remove or change one.
const time = z.string().meta({ format: 'date-time', description: 'ISO 8601, UTC.' });
const count = z.number().int().min(0);
const processStatus = z.enum(['queued', 'running', 'exited', 'stopped', 'failed', 'lost']);

export const errorBodySchema = z
  .looseObject({
    error: z.looseObject({
      code: z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]),
      message: z.string().describe('One sentence a model can act on.'),
      details: z.record(z.string(), z.unknown()).optional().describe('The fields the code names (path, hunk, line...).'),
    }),
  })
  .describe('Every failure has this body, with the status its code maps to.');

export const healthSchema = z.looseObject({
  ok: z.literal(true),
  sandbox: z.literal('none').optional().describe('Present when commands run without a sandbox on purpose (TOOLGATE_SANDBOX=none).'),
});

export const workspaceInfoSchema = z.looseObject({
  id: z.string(),
  files: count.describe('How many files the workspace holds.'),
  bytes: count.describe('The sum of their sizes in bytes.'),
  version: count,
  createdAt: time,
});

export const fileListSchema = z.looseObject({
  entries: z.array(
    z.looseObject({
      path: z.string(),
      type: z.enum(['file', 'dir', 'symlink']),
      size: count,
      version: z.string(),
      target: z.string().optional().describe('Symlinks only: where the link points.'),
    }),
  ),
});

export const toolListSchema = z
  .looseObject({ tools: z.array(z.record(z.string(), z.unknown())) })
  .describe(
    'format=jsonschema: {name, description, inputSchema}; openai: {type: "function", function: {name, description, parameters}} (Chat Completions); ' +
      'anthropic: {name, description, input_schema}; mcp: {name, description, inputSchema, annotations}.',
  );

const processSnapshot = z.looseObject({
  processId: z.string(),
  command: z.string(),
  cwd: z.string(),
  status: processStatus,
  pid: z.number().int().nullable(),
  exitCode: z.number().int().nullable(),
  startedAt: time.nullable(),
  endedAt: time.nullable(),
});

/** The `result` of each built-in tool; a tool without one here is documented with an open object. */
export const toolResultSchemas: Record<string, z.ZodType> = {
  read_file: z.looseObject({
    path: z.string(),
    content: z.string(),
    startLine: z.number().int(),
    endLine: z.number().int(),
    totalLines: count,
    truncated: z.boolean(),
    version: z.string(),
  }),
  write_file: z.looseObject({
    resolvedPath: z.string(),
    mode: z.enum(['create', 'overwrite', 'append']),
    created: z.boolean(),
    appended: z.boolean(),
    bytesWritten: count,
    version: z.string(),
  }),
  apply_patch: z.looseObject({
    files: z.array(
      z.looseObject({ path: z.string(), action: z.enum(['add', 'update', 'delete', 'move']), movedTo: z.string().optional(), diff: z.string() }),
    ),
    summary: z.string().describe('"A path", "M path", "D path" lines: adds, then updates and moves, then deletes.'),
  }),
  bash: z
    .union([
      z
        .looseObject({
          exitCode: z.number().int().nullable(),
          stdout: z.string(),
          stderr: z.string(),
          timedOut: z.boolean(),
          durationMs: count,
          truncated: z.boolean(),
          conflicts: z.array(z.string()).optional(),
          error: z.string().optional(),
        })
        .describe('exec'),
      processSnapshot.describe('start, stop (status adds error and conflicts)'),
      z
        .looseObject({ processId: z.string(), data: z.string(), offset: count, nextOffset: count, startOffset: count, truncated: z.boolean(), status: processStatus })
        .describe('logs'),
      z.looseObject({ processId: z.string(), bytesWritten: count }).describe('write'),
      z.looseObject({ processes: z.array(processSnapshot) }).describe('list'),
    ])
    .describe(`By action (${bashActions.join(', ')}).`),
};

export const approvalSchema = z.looseObject({
  id: z.string(),
  status: z.enum(['pending', 'approved', 'rejected']),
  tool: z.string(),
  action: z.string().optional().describe('bash calls: the action.'),
  arguments: z.unknown(),
  workspace: z.string(),
  keyId: z.string(),
  createdAt: time,
  expiresAt: time,
  decidedAt: time.optional(),
  decidedBy: z.string().nullable().optional(),
  reason: z.string().nullable().optional(),
  result: z.unknown().optional().describe('Once an approved call ran: its result.'),
  error: z.looseObject({ code: z.string(), message: z.string(), details: z.unknown().optional() }).optional(),
  stopReason: z.literal('BLOCKED_BY_APPROVAL').optional(),
});

export const approvalPendingSchema = z
  .looseObject({ approval: approvalSchema })
  .describe('The call waits for a decision (status pending); it runs once when approved. Read it with GET /v1/approvals/{id}.');

export const approvalListSchema = z.looseObject({ approvals: z.array(approvalSchema) });

const rule = z.looseObject({ tool: z.string(), action: z.string().optional(), decision: z.enum(['allow', 'approve', 'deny']) });

export const keySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  role: z.enum(['agent', 'approver', 'admin', 'runner']),
  workspaces: z.array(z.string()),
  tools: z.array(z.string()).nullable().describe('null: every tool.'),
  approvalMode: z.enum(['auto', 'safe', 'manual']),
  rules: z.array(rule),
  quota: z.looseObject({ calls: count.optional(), processSeconds: z.number().min(0).optional(), period: z.enum(['day', 'month']) }).nullable(),
  rateLimitPerMinute: z.number().int().nullable(),
  notifyUrl: z.string().nullable(),
  createdAt: time,
});

export const keyCreatedSchema = keySchema.extend({
  secret: z.string().describe('The key itself, shown in this answer only.'),
  notifySecret: z.string().optional().describe('With notifyUrl: the secret that signs approval notices, shown once.'),
});

export const keyListSchema = z.looseObject({ keys: z.array(keySchema) });

export const usageSchema = z.looseObject({
  from: time,
  to: time.nullable(),
  rows: z.array(
    z.looseObject({ group: z.string(), calls: count, errors: count, bytesIn: count, bytesOut: count, processSeconds: z.number().min(0) }),
  ),
});

export const jsonRpcMessageSchema = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number()]).optional(),
    method: z.string().optional(),
    params: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.unknown().optional(),
  })
  .describe('A JSON-RPC 2.0 message of the Model Context Protocol.');

export const hookSchema = z
  .looseObject({ id: z.string(), workspace: z.string(), checkpoint: z.boolean(), requireTimestamp: z.boolean(), createdAt: time })
  .describe('A webhook: never its secret. Deliveries run as the admin key that configured it.');

export const hookListSchema = z.looseObject({ hooks: z.array(hookSchema) }).describe('Webhooks, by id.');

export const hookDeliveryAnswerSchema = z
  .looseObject({
    result: toolResultSchemas.apply_patch!.describe("apply_patch's result."),
    checkpoint: z.looseObject({ id: z.string(), createdAt: time }).optional().describe('Hooks with checkpoint: the checkpoint made after the patch.'),
    checkpointError: z.looseObject({ code: z.string(), message: z.string() }).optional().describe('The patch is applied, but the checkpoint after it failed.'),
  })
  .describe("The delivery's patch was applied: apply_patch's answer.");

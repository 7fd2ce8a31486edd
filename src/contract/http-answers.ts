// The answers of the HTTP contract, declared once: the OpenAPI document is generated from them, the
// tests hold the server's answers to them, and the typed client derives its result types. The
// tools' results are tool-answers.ts; the runner protocol's answers are runner-protocol.ts.
import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import {
  approvalModeSchema,
  approvalStatusSchema,
  keyRoleSchema,
  quotaPeriodSchema,
  ruleDecisionSchema,
} from './http-requests.ts';
import { applyPatchResultSchema } from './tool-answers.ts';
import { count, time } from './wire-values.ts';

// Answers are open objects: the contract may add fields to an answer, never remove or change one.

export const errorBodySchema = z
  .looseObject({
    error: z.looseObject({
      code: z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]),
      message: z.string().describe('One sentence a model can act on.'),
      details: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('The fields the code names (path, hunk, line...).'),
    }),
  })
  .describe('Every failure has this body, with the status its code maps to.');

export const healthSchema = z.looseObject({
  ok: z.literal(true),
  sandbox: z
    .literal('none')
    .optional()
    .describe('Present when commands run without a sandbox on purpose (TOOLGATE_SANDBOX=none).'),
});

// Workspaces.

export const workspaceInfoSchema = z.looseObject({
  id: z.string(),
  files: count.describe('How many files the workspace holds.'),
  bytes: count.describe('The sum of their sizes in bytes.'),
  version: count,
  createdAt: time,
});

export const fileEntrySchema = z.looseObject({
  path: z.string(),
  type: z.enum(['file', 'dir', 'symlink']),
  size: count,
  version: z.string(),
  target: z.string().optional().describe('Symlinks only: where the link points.'),
});

export const fileListSchema = z.looseObject({
  entries: z.array(fileEntrySchema),
  /** Present while more entries remain: pass it as `cursor` for the next page. */
  nextCursor: z.string().optional(),
});

/** PUT /v1/workspaces/{ws}/archive's answer: what the archive held, and the commit that applied it. */
export const archiveAppliedSchema = z.looseObject({
  files: count.describe('Files the archive gave (hard links included, as copies).'),
  symlinks: count,
  directories: count.describe('Directories the archive named.'),
  bytes: count.describe("The sum of its files' sizes in bytes."),
  deleted: count.describe(
    'Entries removed: under prefix and not in the archive (replace), or replaced by another type.',
  ),
  version: count.describe('The workspace version once the archive is applied.'),
  skipped: z
    .array(z.looseObject({ entry: z.string(), reason: z.string() }))
    .describe('Entries of kinds a workspace does not hold (devices, fifos), left out.'),
});

// History.

const commitId = z.string().describe('A git commit id: 40 hex digits.');

export const checkpointSchema = z.looseObject({ id: commitId, createdAt: time });

export const checkpointListSchema = z.looseObject({
  checkpoints: z.array(z.looseObject({ id: commitId, message: z.string(), createdAt: time })).describe('Newest first.'),
});

export const diffSchema = z.looseObject({
  diff: z
    .string()
    .describe('A unified diff in git layout (a/ and b/ prefixes, /dev/null, modes); empty when nothing changed.'),
});

export const restoreSchema = z.looseObject({
  restored: commitId,
  version: z.number().int().min(0).nullable().describe('The workspace version after the restore.'),
});

/** What an import brought in, as the workspace's history reports it. */
export const importResultSchema = z.looseObject({
  url: z.string().describe('The remote, without credentials.'),
  ref: z.string(),
  commit: commitId.describe('The remote commit imported.'),
  files: z.number().int().min(0),
  symlinks: z.number().int().min(0),
  bytes: z.number().int().min(0),
  /** The workspace version the import created (null when the repository held nothing importable). */
  version: z.number().int().min(0).nullable(),
  skipped: z
    .array(z.looseObject({ path: z.string(), reason: z.string() }))
    .describe('Entries left out: paths the path guard refuses for writes, submodules.'),
});

/** POST /v1/workspaces/{ws}/import's answer: the import, and the checkpoint made of it. */
export const importSchema = importResultSchema.extend({ checkpoint: checkpointSchema });

// Tools.

export const toolListSchema = z
  .looseObject({ tools: z.array(z.record(z.string(), z.unknown())) })
  .describe(
    'format=jsonschema: {name, description, inputSchema}; openai: {type: "function", function: {name, description, parameters}} (Chat Completions); ' +
      'anthropic: {name, description, input_schema}; mcp: {name, description, inputSchema, annotations}.',
  );

// Approvals.

export const approvalSchema = z.looseObject({
  id: z.string(),
  status: approvalStatusSchema,
  tool: z.string(),
  action: z.string().optional().describe('bash calls: the action.'),
  arguments: z.unknown(),
  workspace: z.string(),
  keyId: z.string(),
  keyName: z.string().optional().describe('The name of the key that made the call.'),
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
  .describe(
    'The call waits for a decision (status pending); it runs once when approved. Read it with GET /v1/approvals/{id}.',
  );

export const approvalListSchema = z.looseObject({ approvals: z.array(approvalSchema) });

// Keys.

/** An explicit approval rule: the first one matching a call decides it, before the mode. */
export const approvalRuleSchema = z.looseObject({
  tool: z.string(),
  action: z.string().optional(),
  decision: ruleDecisionSchema,
});

export const quotaSchema = z.looseObject({
  calls: count.optional(),
  processSeconds: z.number().min(0).optional(),
  period: quotaPeriodSchema,
});

export const keySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  role: keyRoleSchema,
  workspaces: z.array(z.string()),
  tools: z.array(z.string()).nullable().describe('null: every tool.'),
  approvalMode: approvalModeSchema,
  rules: z.array(approvalRuleSchema),
  quota: quotaSchema.nullable(),
  rateLimitPerMinute: z.number().int().nullable(),
  notifyUrl: z.string().nullable(),
  createdAt: time,
});

export const keyCreatedSchema = keySchema.extend({
  secret: z.string().describe('The key itself, shown in this answer only.'),
  notifySecret: z.string().optional().describe('With notifyUrl: the secret that signs approval notices, shown once.'),
});

export const keyListSchema = z.looseObject({ keys: z.array(keySchema) });

// Usage.

export const usageRowSchema = z.looseObject({
  group: z.string(),
  calls: count,
  errors: count,
  bytesIn: count,
  bytesOut: count,
  processSeconds: z.number().min(0),
});
export type UsageRow = z.output<typeof usageRowSchema>;

export const usageSchema = z.looseObject({ from: time, to: time.nullable(), rows: z.array(usageRowSchema) });

// MCP.

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

// Webhooks.

export const hookSchema = z
  .looseObject({
    id: z.string(),
    workspace: z.string(),
    checkpoint: z.boolean(),
    requireTimestamp: z.boolean(),
    createdAt: time,
  })
  .describe('A webhook: never its secret. Deliveries run as the admin key that configured it.');

export const hookListSchema = z.looseObject({ hooks: z.array(hookSchema) }).describe('Webhooks, by id.');

export const hookDeliveryAnswerSchema = z
  .looseObject({
    result: applyPatchResultSchema.describe("apply_patch's result."),
    checkpoint: z
      .looseObject({ id: z.string(), createdAt: time })
      .optional()
      .describe('Hooks with checkpoint: the checkpoint made after the patch.'),
    checkpointError: z
      .looseObject({ code: z.string(), message: z.string() })
      .optional()
      .describe('The patch is applied, but the checkpoint after it failed.'),
  })
  .describe("The delivery's patch was applied: apply_patch's answer.");

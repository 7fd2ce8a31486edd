// The bodies and enumerated query values the HTTP routes take, declared once: the routes validate
// with them, the OpenAPI document states them, and the typed client derives what it sends.
import { z } from 'zod';
import { WORKSPACE_ID_PATTERN } from './wire-values.ts';

// Requests are strict objects: a field the server does not know is an error the caller sees.

// Workspaces.

export const workspaceSettings = z.strictObject({
  excludedPaths: z.array(z.string()).max(1000).optional(),
  autoCheckpoint: z.boolean().optional().describe('Take a history checkpoint after each successful apply_patch.'),
});

export const forkRequest = z.strictObject({
  to: z
    .string()
    .describe("The new workspace's id: ^[a-z0-9][a-z0-9_-]{0,62}$, not yet in use, within the key's scope."),
});

/** GET /v1/workspaces/{ws}/archive's query. */
export const archiveDownloadQuery = z.strictObject({
  format: z.enum(['tar', 'tgz']).default('tar').describe("tar (default), or tgz: the tar gzip'd."),
  prefix: z
    .string()
    .default('')
    .describe('The directory to archive (default the root); entries are named relative to it.'),
});

export const archiveModes = ['merge', 'replace'] as const;

/** PUT /v1/workspaces/{ws}/archive's query. */
export const archiveUploadQuery = z.strictObject({
  mode: z
    .enum(archiveModes)
    .default('merge')
    .describe(
      'merge (default) writes over what is there; replace also deletes everything under prefix the archive lacks.',
    ),
  prefix: z.string().default('').describe('The directory to unpack into (default the root; created when absent).'),
});

// History.

export const checkpointInput = z.strictObject({
  message: z.string().max(10_000).optional().describe('The commit message (default "checkpoint").'),
});

export const restoreInput = z.strictObject({
  checkpoint: z.string().describe('The id of a checkpoint of this workspace (40 hex digits).'),
});

/** Where an import fetches from (smart HTTP). */
export const gitImportSourceSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(4096)
    .describe('An http(s) URL of a git repository (smart HTTP); credentials may be given in it.'),
  ref: z.string().min(1).max(1024).optional().describe("A branch or tag (default the remote's default branch)."),
  depth: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .optional()
    .describe('Commits of history to fetch (default 1: the tip only).'),
});

export const importInput = z.strictObject({ git: gitImportSourceSchema });

export const checkpointsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

// Approvals.

export const approvalStatusSchema = z.enum(['pending', 'approved', 'rejected']);
export type ApprovalStatus = z.output<typeof approvalStatusSchema>;
export const approvalStatuses = approvalStatusSchema.options;

export const decisionInput = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reason: z.string().min(1).max(2000).optional(),
});

// Keys.

export const keyRoleSchema = z.enum(['agent', 'approver', 'admin', 'runner']);
export type KeyRole = z.output<typeof keyRoleSchema>;
export const approvalModeSchema = z.enum(['auto', 'safe', 'manual']);
export type ApprovalMode = z.output<typeof approvalModeSchema>;
export const ruleDecisionSchema = z.enum(['allow', 'approve', 'deny']);
export const quotaPeriodSchema = z.enum(['day', 'month']);

/** An explicit approval rule: the first one matching a call decides it, before the mode. */
export const approvalRuleInput = z.strictObject({
  tool: z.string().min(1).max(100),
  /** For bash: one action; absent matches every action. */
  action: z.string().min(1).max(100).optional(),
  decision: ruleDecisionSchema,
});

/** A key's quota per period: calls, process seconds, or both. */
export const quotaInput = z
  .strictObject({
    calls: z.number().int().min(0).optional(),
    processSeconds: z.number().min(0).optional(),
    period: quotaPeriodSchema,
  })
  .refine((quota) => quota.calls !== undefined || quota.processSeconds !== undefined, {
    message: 'needs calls or processSeconds',
  });

export const keyInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  role: keyRoleSchema,
  workspaces: z
    .array(
      z
        .string()
        .refine((id) => id === '*' || WORKSPACE_ID_PATTERN.test(id), { message: 'must be "*" or a workspace id' }),
    )
    .min(1)
    .max(1000),
  tools: z.array(z.string().min(1).max(100)).max(100).optional(),
  approvalMode: approvalModeSchema.optional(),
  rules: z.array(approvalRuleInput).max(100).optional(),
  quota: quotaInput.optional(),
  rateLimitPerMinute: z.number().int().min(1).max(1_000_000).optional(),
  notifyUrl: z
    .string()
    .max(2000)
    .refine((url) => /^https?:\/\//i.test(url) && URL.canParse(url), { message: 'must be an http or https URL' })
    .optional(),
});
/** A new key, as POST /v1/keys takes it once parsed. */
export type NewKey = z.output<typeof keyInput>;

// Usage.

export const usageGroupSchema = z.enum(['tool', 'workspace', 'key']);
export type UsageGroup = z.output<typeof usageGroupSchema>;
export const usageGroups = usageGroupSchema.options;

// Webhooks.

/** Seconds since the epoch; when present it is signed too and must be within the window; a hook may require it. */
export const TIMESTAMP_HEADER = 'x-toolgate-timestamp';
export const TIMESTAMP_WINDOW_SECONDS = 300;

export const hookInput = z.strictObject({
  secret: z
    .string()
    .min(16)
    .max(1024)
    .describe('The HMAC-SHA256 key senders sign deliveries with; at least 16 characters. Never shown again.'),
  workspace: z
    .string()
    .regex(WORKSPACE_ID_PATTERN, { message: 'must be a workspace id' })
    .describe('The workspace deliveries patch.'),
  checkpoint: z
    .boolean()
    .optional()
    .describe("Make a checkpoint (with the delivery's commitMessage) after each applied delivery; default false."),
  requireTimestamp: z
    .boolean()
    .optional()
    .describe(
      `Refuse deliveries without ${TIMESTAMP_HEADER} within ${TIMESTAMP_WINDOW_SECONDS} s and a signature over "<timestamp>.<raw body>", so a captured delivery cannot be replayed later; default false.`,
    ),
});

/** The body a delivery carries; unknown fields are refused, as in every request of the contract. */
export const hookDeliveryInput = z.strictObject({
  patch: z.string().describe('The patch, as apply_patch takes it (the Codex envelope or a git-style unified diff).'),
  commitMessage: z
    .string()
    .max(10_000)
    .optional()
    .describe("The checkpoint's message, when the hook makes checkpoints."),
});

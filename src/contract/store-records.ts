// The records the stores of both homes hand out (a key, an approval, a hook's target, a lease's holder),
// declared once: the Cloudflare home's objects also pass them to one another (object-calls.ts).
import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import {
  approvalModeSchema,
  approvalRuleInput,
  approvalStatusSchema,
  keyRoleSchema,
  quotaInput,
} from './http-requests.ts';
import { count } from './wire-values.ts';

// The records are plain objects: a field a newer object adds is dropped, not refused.
// JSON leaves out a field whose value is undefined; read back, each such field is there again.

/** An API key as the directory holds it (its secret never travels). */
export const storedKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    role: keyRoleSchema,
    workspaces: z.array(z.string()),
    tools: z.array(z.string()).optional(),
    approvalMode: approvalModeSchema,
    rules: z.array(approvalRuleInput),
    quota: quotaInput.optional(),
    rateLimitPerMinute: z.number().int().optional(),
    notifyUrl: z.string().optional(),
    createdAt: z.string(),
  })
  .transform((key) => ({
    ...key,
    tools: key.tools,
    quota: key.quota,
    rateLimitPerMinute: key.rateLimitPerMinute,
    notifyUrl: key.notifyUrl,
  }));
export type StoredKey = z.output<typeof storedKeySchema>;

const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/** An approval as a workspace object holds it, with the usage record of its call. */
export const storedApprovalSchema = z
  .object({
    id: z.string(),
    status: approvalStatusSchema,
    tool: z.string(),
    action: z.string().optional(),
    arguments: z.unknown(),
    workspace: z.string(),
    keyId: z.string(),
    keyName: z.string().optional(),
    createdAt: z.string(),
    expiresAt: z.string(),
    decidedAt: z.string().optional(),
    decidedBy: z.string().optional(),
    reason: z.string().optional(),
    result: z.unknown().optional(),
    error: z
      .object({
        code: z.enum([...errorCodes, 'interrupted']),
        message: z.string(),
        details: z.unknown().optional(),
      })
      .optional(),
    usageId: z.number().int(),
    bytesIn: count,
  })
  .transform((approval) => ({
    ...approval,
    action: approval.action,
    decidedAt: approval.decidedAt,
    decidedBy: approval.decidedBy,
    reason: approval.reason,
    result: approval.result,
    error: approval.error,
  }));
export type StoredApproval = z.output<typeof storedApprovalSchema>;

/** Who leases a job: the runner key and the workspaces it serves. */
export const leaseHolderSchema = z.object({ keyId: z.string(), workspaces: z.array(z.string()).readonly() });
export type LeaseHolder = z.output<typeof leaseHolderSchema>;

/** A hook as its deliveries need it, without its secret. */
export const hookTargetSchema = z.object({
  id: z.string(),
  workspace: z.string(),
  ownerKeyId: z.string(),
  checkpoint: z.boolean(),
});
export type HookTarget = z.output<typeof hookTargetSchema>;

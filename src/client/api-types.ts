// The contract's bodies beyond the tools: workspaces, keys, approvals, usage and tool listings.
import type { ImportResult } from '../history/git-import.ts';
import type { ApprovalStatus } from '../approvals/approval-store.ts';
import type { ErrorCode } from '../core/errors.ts';
import type { ApprovalMode, ApprovalRule, KeyRole, NewKey, Quota } from '../keys/key-store.ts';
import type { UsageGroup, UsageRow } from '../metering/usage-meter.ts';
import type { ToolAnnotations } from '../tools/tool.ts';
import type { ToolFormat } from '../tools/tool-formats.ts';
import type { ListedEntry } from '../workspace/workspace.ts';
import type { WorkspaceInfo } from '../workspace/workspaces.ts';

export type { ApprovalMode, ApprovalRule, ApprovalStatus, ErrorCode, KeyRole, Quota, ToolFormat, UsageGroup, UsageRow, WorkspaceInfo };

export interface WorkspaceSettings {
  excludedPaths?: string[];
  /** A checkpoint after every successful apply_patch. */
  autoCheckpoint?: boolean;
}

/** PUT /v1/workspaces/{ws}: `created` tells a new workspace (201) from an existing one (200). */
export interface PutWorkspaceAnswer {
  created: boolean;
  workspace: WorkspaceInfo;
}

export type FileEntry = ListedEntry;

export interface ListFilesQuery {
  /** The directory to list (default the root). */
  prefix?: string;
  /** Everything below it, not only its direct children. */
  recursive?: boolean;
}

export interface FileListing {
  entries: FileEntry[];
}

/** POST /v1/keys's body. */
export type NewKeyBody = NewKey;

/** A key as GET /v1/keys shows it: never its secret. */
export interface KeyInfo {
  id: string;
  name: string;
  role: KeyRole;
  workspaces: string[];
  /** null: every tool. */
  tools: string[] | null;
  approvalMode: ApprovalMode;
  rules: ApprovalRule[];
  quota: Quota | null;
  rateLimitPerMinute: number | null;
  notifyUrl: string | null;
  createdAt: string;
}

/** POST /v1/keys's answer: the only time the secret (and the notice-signing secret) is shown. */
export interface CreatedKey extends KeyInfo {
  secret: string;
  notifySecret?: string;
}

export interface KeyList {
  keys: KeyInfo[];
}

export interface Approval {
  id: string;
  status: ApprovalStatus;
  tool: string;
  /** bash's action. */
  action?: string;
  arguments: unknown;
  workspace: string;
  keyId: string;
  createdAt: string;
  expiresAt: string;
  decidedAt?: string;
  decidedBy?: string | null;
  reason?: string | null;
  /** Once approved and run: the call's result, or its error. */
  result?: unknown;
  error?: { code: ErrorCode | 'interrupted'; message: string; details?: unknown };
  stopReason?: 'BLOCKED_BY_APPROVAL';
}

export interface ApprovalQuery {
  status?: ApprovalStatus;
  /** At most this many (1 to 1,000; default 100). */
  limit?: number;
}

export interface ApprovalList {
  approvals: Approval[];
}

export interface ApprovalDecision {
  decision: 'approve' | 'reject';
  reason?: string;
}

export interface UsageQuery {
  /** An ISO 8601 time, milliseconds since the epoch, or a Date. */
  from?: string | number | Date;
  to?: string | number | Date;
  groupBy?: UsageGroup;
  /** An admin key: one key's calls only. */
  keyId?: string;
}

export interface UsageReport {
  from: string;
  to: string | null;
  rows: UsageRow[];
}

/** One tool in each ecosystem's function-calling shape, as GET /v1/tools?format= lists it. */
export interface ToolDefinitions {
  jsonschema: { name: string; description: string; inputSchema: Record<string, unknown> };
  openai: { type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } };
  anthropic: { name: string; description: string; input_schema: Record<string, unknown> };
  mcp: { name: string; description: string; inputSchema: Record<string, unknown>; annotations: ToolAnnotations };
}

export interface ToolListing<Format extends ToolFormat> {
  tools: ToolDefinitions[Format][];
}

/** A checkpoint: a git commit of the workspace kept beside it. */
export interface Checkpoint {
  id: string;
  createdAt: string;
}

export interface CheckpointList {
  checkpoints: (Checkpoint & { message: string })[];
}

export interface RestoreAnswer {
  restored: string;
  version: number | null;
}

/** POST /v1/workspaces/{ws}/import: where to fetch from (smart HTTP); depth 1 unless given. */
export interface GitImportSource {
  url: string;
  ref?: string;
  depth?: number;
}

/** The import's outcome, as the server's history reports it, and the checkpoint made of it. */
export type ImportAnswer = ImportResult & { checkpoint: Checkpoint };

/** PUT /v1/hooks/{id}: the secret deliveries are signed with, and where their patches go. */
export interface HookSettings {
  secret: string;
  workspace: string;
  checkpoint?: boolean;
  /** Deliveries must carry X-Toolgate-Timestamp (within 300 s) and sign "<timestamp>.<raw body>". */
  requireTimestamp?: boolean;
}

export interface Hook {
  id: string;
  workspace: string;
  checkpoint: boolean;
  requireTimestamp: boolean;
  createdAt: string;
}

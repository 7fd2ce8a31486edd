// The contract's bodies beyond the tools: workspaces, keys, approvals, usage and tool listings, derived from contract/.
import type { z } from 'zod';
import type {
  archiveAppliedSchema,
  approvalListSchema,
  approvalRuleSchema,
  approvalSchema,
  checkpointListSchema,
  checkpointSchema,
  fileEntrySchema,
  fileListSchema,
  hookSchema,
  importSchema,
  keyCreatedSchema,
  keyListSchema,
  keySchema,
  quotaSchema,
  restoreSchema,
  usageRowSchema,
  usageSchema,
  workspaceInfoSchema,
} from '../contract/http-answers.ts';
import type {
  ApprovalMode,
  ApprovalStatus,
  archiveDownloadQuery,
  archiveUploadQuery,
  decisionInput,
  gitImportSourceSchema,
  hookInput,
  keyInput,
  KeyRole,
  UsageGroup,
  workspaceSettings,
} from '../contract/http-requests.ts';
import type { ToolDefinitions, ToolFormat } from '../contract/tool-answers.ts';
import type { ErrorCode } from '../core/errors.ts';

export type { ApprovalMode, ApprovalStatus, ErrorCode, KeyRole, ToolDefinitions, ToolFormat, UsageGroup };

export type ApprovalRule = z.output<typeof approvalRuleSchema>;
export type Quota = z.output<typeof quotaSchema>;
export type UsageRow = z.output<typeof usageRowSchema>;
export type WorkspaceInfo = z.output<typeof workspaceInfoSchema>;

/** PUT /v1/workspaces/{ws}'s body. */
export type WorkspaceSettings = z.input<typeof workspaceSettings>;

/** PUT /v1/workspaces/{ws}: `created` tells a new workspace (201) from an existing one (200). */
export interface PutWorkspaceAnswer {
  created: boolean;
  workspace: WorkspaceInfo;
}

export type FileEntry = z.output<typeof fileEntrySchema>;

export interface ListFilesQuery {
  /** The directory to list (default the root). */
  prefix?: string;
  /** Everything below it, not only its direct children. */
  recursive?: boolean;
  /** At most this many entries (default and maximum 10,000). */
  limit?: number;
  /** The `nextCursor` of the page before. */
  cursor?: string;
}

export type FileListing = z.output<typeof fileListSchema>;

/** GET /v1/workspaces/{ws}/archive's options: `format` tar (default) or tgz, `prefix` the directory (default the root). */
export type ArchiveDownloadOptions = z.input<typeof archiveDownloadQuery>;

/** PUT /v1/workspaces/{ws}/archive's options: `mode` merge (default) or replace, `prefix` the directory to unpack into. */
export type ArchiveUploadOptions = z.input<typeof archiveUploadQuery>;

/** What an applied archive held, and the workspace version it made. */
export type ArchiveApplied = z.output<typeof archiveAppliedSchema>;

/** POST /v1/keys's body. */
export type NewKeyBody = z.input<typeof keyInput>;

/** A key as GET /v1/keys shows it: never its secret. */
export type KeyInfo = z.output<typeof keySchema>;

/** POST /v1/keys's answer: the only time the secret (and the notice-signing secret) is shown. */
export type CreatedKey = z.output<typeof keyCreatedSchema>;

export type KeyList = z.output<typeof keyListSchema>;

export type Approval = z.output<typeof approvalSchema>;

export interface ApprovalQuery {
  status?: ApprovalStatus;
  /** At most this many (1 to 1,000; default 100). */
  limit?: number;
}

export type ApprovalList = z.output<typeof approvalListSchema>;

export type ApprovalDecision = z.input<typeof decisionInput>;

export interface UsageQuery {
  /** An ISO 8601 time, milliseconds since the epoch, or a Date. */
  from?: string | number | Date;
  to?: string | number | Date;
  groupBy?: UsageGroup;
  /** An admin key: one key's calls only. */
  keyId?: string;
}

export type UsageReport = z.output<typeof usageSchema>;

export interface ToolListing<Format extends ToolFormat> {
  tools: ToolDefinitions[Format][];
}

/** A checkpoint: a git commit of the workspace kept beside it. */
export type Checkpoint = z.output<typeof checkpointSchema>;

export type CheckpointList = z.output<typeof checkpointListSchema>;

export type RestoreAnswer = z.output<typeof restoreSchema>;

/** POST /v1/workspaces/{ws}/import: where to fetch from (smart HTTP); depth 1 unless given. */
export type GitImportSource = z.input<typeof gitImportSourceSchema>;

/** The import's outcome, and the checkpoint made of it. */
export type ImportAnswer = z.output<typeof importSchema>;

/** PUT /v1/hooks/{id}: the secret deliveries are signed with, and where their patches go. */
export type HookSettings = z.input<typeof hookInput>;

export type Hook = z.output<typeof hookSchema>;

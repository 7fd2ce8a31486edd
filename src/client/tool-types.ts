// The four tools as the client sees them: arguments from the tools' own zod schemas, results as API.md gives them.
import type { z } from 'zod';
import type { LogPage } from '../processes/process-store.ts';
import type { ProcessSnapshot } from '../processes/process-record.ts';
import type { applyPatchInput } from '../tools/apply-patch/apply-patch.ts';
import type { bashInput } from '../tools/bash.ts';
import type { readFileInput } from '../tools/read-file.ts';
import type { writeFileInput } from '../tools/write-file.ts';
import type { Approval } from './api-types.ts';

export type { ProcessSnapshot, ProcessStatus } from '../processes/process-record.ts';

export type ReadFileArgs = z.input<typeof readFileInput>;
export type WriteFileArgs = z.input<typeof writeFileInput>;
export type ApplyPatchArgs = z.input<typeof applyPatchInput>;
export type BashAction = z.input<typeof bashInput>['action'];
/** bash's arguments for one action; the server refuses arguments the action does not take. */
export type BashArgs<Action extends BashAction = BashAction> = z.input<typeof bashInput> & { action: Action };

export interface ReadFileResult {
  path: string;
  content: string;
  startLine: number;
  endLine: number;
  totalLines: number;
  truncated: boolean;
  version: string;
}

export interface WriteFileResult {
  resolvedPath: string;
  mode: 'create' | 'overwrite' | 'append';
  created: boolean;
  appended: boolean;
  bytesWritten: number;
  version: string;
}

export interface PatchedFile {
  path: string;
  action: 'add' | 'update' | 'delete' | 'move';
  movedTo?: string;
  diff: string;
}

export interface ApplyPatchResult {
  files: PatchedFile[];
  summary: string;
  dryRun: boolean;
}

export interface BashExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  truncated: boolean;
  /** Files the command changed that kept the version written through the API meanwhile. */
  conflicts?: string[];
  /** Why some of the command's changes were not kept. */
  error?: string;
}

/** bash `status`: the snapshot, with why it failed and what its sync-back left to the API's version. */
export interface BashStatusResult extends ProcessSnapshot {
  error: string | null;
  conflicts: string[];
}

export type BashLogsResult = LogPage;

export interface BashWriteResult {
  processId: string;
  bytesWritten: number;
}

export interface BashListResult {
  processes: ProcessSnapshot[];
}

/** What each bash action answers. */
export interface BashResults {
  exec: BashExecResult;
  start: ProcessSnapshot;
  status: BashStatusResult;
  logs: BashLogsResult;
  write: BashWriteResult;
  stop: ProcessSnapshot;
  list: BashListResult;
}

/** Each tool's arguments and result, by the name the HTTP route uses. */
export interface ToolSignatures {
  read_file: { args: ReadFileArgs; result: ReadFileResult };
  write_file: { args: WriteFileArgs; result: WriteFileResult };
  apply_patch: { args: ApplyPatchArgs; result: ApplyPatchResult };
  bash: { args: BashArgs; result: BashResults[BashAction] };
}

export type ToolName = keyof ToolSignatures;

/**
 * A tool call's answer, exactly the body the server sent: `result` when the call ran (200), or
 * `approval` when it waits for an approver (202). Errors are thrown as ToolgateError.
 */
export type ToolAnswer<Result> = { result: Result; approval?: undefined } | { approval: Approval; result?: undefined };

export interface ToolCallOptions {
  /** Wait up to this many milliseconds (at most 60,000) for a decision when the call needs approval. */
  waitMs?: number;
  signal?: AbortSignal;
}

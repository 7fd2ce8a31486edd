// The tools as the client sees them: arguments and results derived from contract/.
import type { z } from 'zod';
import type { LogPage, ProcessSnapshot } from '../contract/process-snapshot.ts';
import type {
  applyPatchResultSchema,
  bashListResultSchema,
  bashStatusResultSchema,
  bashWriteResultSchema,
  grepContentResultSchema,
  grepCountResultSchema,
  patchedFileSchema,
  readFileResultSchema,
  searchPathsResultSchema,
  writeFileResultSchema,
} from '../contract/tool-answers.ts';
import type { BashExecResult } from '../contract/tool-answers.ts';

export type { BashExecResult };
import type {
  applyPatchInput,
  bashInput,
  globInput,
  grepInput,
  GrepOutputMode,
  readFileInput,
  writeFileInput,
} from '../contract/tool-inputs.ts';
import type { Approval } from './api-types.ts';

export type { ProcessSnapshot, ProcessStatus } from '../contract/process-snapshot.ts';

export type ReadFileArgs = z.input<typeof readFileInput>;
export type WriteFileArgs = z.input<typeof writeFileInput>;
export type ApplyPatchArgs = z.input<typeof applyPatchInput>;
export type BashAction = z.input<typeof bashInput>['action'];
export type GrepArgs = z.input<typeof grepInput>;
export type GlobArgs = z.input<typeof globInput>;
export type { GrepOutputMode };
/** bash's arguments for one action; the server refuses arguments the action does not take. */
export type BashArgs<Action extends BashAction = BashAction> = z.input<typeof bashInput> & { action: Action };

export type ReadFileResult = z.output<typeof readFileResultSchema>;
export type WriteFileResult = z.output<typeof writeFileResultSchema>;
export type PatchedFile = z.output<typeof patchedFileSchema>;
export type ApplyPatchResult = z.output<typeof applyPatchResultSchema>;
/** bash `status`: the snapshot, with why it failed and what its sync-back left to the API's version. */
export type BashStatusResult = z.output<typeof bashStatusResultSchema>;
export type BashLogsResult = LogPage;
export type BashWriteResult = z.output<typeof bashWriteResultSchema>;
export type BashListResult = z.output<typeof bashListResultSchema>;
/** grep with outputMode content: the matching lines with their context. */
export type GrepContentResult = z.output<typeof grepContentResultSchema>;
/** grep with outputMode files_with_matches (the default), and glob: paths in order. */
export type SearchPathsResult = z.output<typeof searchPathsResultSchema>;
/** grep with outputMode count: matching lines per file. */
export type GrepCountResult = z.output<typeof grepCountResultSchema>;

/** What grep answers in each outputMode. */
export interface GrepResults {
  content: GrepContentResult;
  files_with_matches: SearchPathsResult;
  count: GrepCountResult;
}
/** grep's arguments for one outputMode (files_with_matches when none is given). */
export type GrepArgsFor<Mode extends GrepOutputMode> = GrepArgs &
  (Mode extends 'files_with_matches' ? { outputMode?: Mode } : { outputMode: Mode });

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
  grep: { args: GrepArgs; result: GrepResults[GrepOutputMode] };
  glob: { args: GlobArgs; result: SearchPathsResult };
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

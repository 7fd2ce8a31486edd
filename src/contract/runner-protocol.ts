// The runner protocol, declared once: what a runner asks for, is handed and reports, as the
// server's routes validate it and the runner reads it (the blob batch body is blob-frames.ts).
import { z } from 'zod';
import { processStatusSchema } from './process-snapshot.ts';
import { blobId, count, queryCount } from './wire-values.ts';

export const MAX_LEASE_WAIT_MS = 30_000;
export const MAX_CONTROL_WAIT_MS = 30_000;

/** The fencing token every report on a job carries. */
const token = z.number().int().nonnegative();

// Requests: strict objects, so a field the server does not know is an error the runner sees.

export const leaseRequestSchema = z.strictObject({
  runnerId: z.string().min(1).max(200),
  waitMs: z.number().int().min(0).max(MAX_LEASE_WAIT_MS).optional(),
  /** Only exec jobs: a runner asks so for its last free slot, so started processes never take every slot. */
  execOnly: z.boolean().optional(),
});

export const blobBatchRequestSchema = z.strictObject({ hashes: z.array(blobId).min(1).max(1000) });

export const startedReportSchema = z.strictObject({ token, pid: z.number().int().nonnegative() });

/** Output as JSON; the runner sends it as a UTF-8 text/plain body with `outputQuerySchema`'s query instead. */
export const outputReportSchema = z.strictObject({
  token,
  data: z.string(),
  offset: z.number().int().nonnegative().optional(),
  skipped: z.number().int().nonnegative().optional(),
});
export const outputQuerySchema = z.strictObject({
  token: queryCount,
  offset: queryCount.optional(),
  skipped: queryCount.optional(),
});

export const heartbeatReportSchema = z.strictObject({
  token,
  stdinAck: z.number().int().min(0).optional(),
  /** The runner has the stop request already, so a waiting heartbeat does not answer for it again. */
  stopAck: z.boolean().optional(),
  /** How long the heartbeat may wait for stdin or a stop (the server waits at most half a lease); absent, it answers at once. */
  waitMs: z.number().int().min(0).max(MAX_CONTROL_WAIT_MS).optional(),
});

/** A written file: its content inline, or the id and size of a blob uploaded before the sync. */
const syncWriteSchema = z
  .strictObject({
    op: z.literal('write'),
    path: z.string(),
    contentBase64: z.string().optional(),
    blob: blobId.optional(),
    size: z.number().int().nonnegative().optional(),
    baseVersion: z.number().int().nullable(),
  })
  .refine(
    (write) =>
      write.contentBase64 !== undefined
        ? write.blob === undefined && write.size === undefined
        : write.blob !== undefined && write.size !== undefined,
    {
      message: 'a write carries its content as contentBase64, or names an uploaded blob by blob and size',
    },
  );
const symlinkChangeSchema = z.strictObject({
  op: z.literal('symlink'),
  path: z.string(),
  target: z.string(),
  baseVersion: z.number().int().nullable(),
});
const mkdirChangeSchema = z.strictObject({ op: z.literal('mkdir'), path: z.string() });
const deleteChangeSchema = z.strictObject({ op: z.literal('delete'), path: z.string(), baseVersion: z.number().int() });

/** One change a sync-back names, as it goes over the wire. */
export const syncChangeSchema = z.discriminatedUnion('op', [
  syncWriteSchema,
  symlinkChangeSchema,
  mkdirChangeSchema,
  deleteChangeSchema,
]);
export type SyncChange = z.output<typeof syncChangeSchema>;

/** A change as either side holds it once decoded: a written file's content as bytes. */
export type RunnerChange =
  | (Pick<z.output<typeof syncWriteSchema>, 'op' | 'path' | 'baseVersion'> & { content: Uint8Array })
  | z.output<typeof symlinkChangeSchema>
  | z.output<typeof mkdirChangeSchema>
  | z.output<typeof deleteChangeSchema>;

/** A write whose content was uploaded beforehand, named by its blob id and size. */
export type UploadedWrite = Pick<z.output<typeof syncWriteSchema>, 'op' | 'path' | 'baseVersion'> & {
  blob: string;
  size: number;
};

export const syncReportSchema = z.strictObject({
  token,
  changes: z.array(syncChangeSchema).max(100_000),
  /** The runner's id for this sync-back: a retry with the same id answers as the first, committing nothing again. */
  syncId: z.string().min(1).max(100).optional(),
});

/** How a process ended, as its runner reports it. */
export const finishReportSchema = z.strictObject({
  exitCode: z.number().int().nullable(),
  /** `stopped` is recorded whatever is reported here once a stop was requested. */
  status: z.enum(['exited', 'stopped', 'failed']),
  timedOut: z.boolean().optional(),
  error: z.string().optional(),
  conflicts: z.array(z.string()).optional(),
  /** exec only: its separate streams, kept for the exec answer. */
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  truncated: z.boolean().optional(),
});
export type FinishReport = z.output<typeof finishReportSchema>;
/** The token first, as the report has always listed it (the OpenAPI document keeps its order). */
export const exitReportSchema = z.strictObject({ token, ...finishReportSchema.shape });

export const blobPieceQuerySchema = z.strictObject({ token: queryCount, offset: queryCount, size: queryCount });
export const blobUploadQuerySchema = z.strictObject({ token: queryCount });

// Answers: open objects, so the server may add a field without breaking a runner.

export const terminalSizeSchema = z.looseObject({ cols: count, rows: count });
export type TerminalSize = z.output<typeof terminalSizeSchema>;

/** A job leased to a runner. */
export const leasedJobSchema = z.looseObject({
  processId: z.string(),
  token: count.describe('The fencing token every report on this job carries.'),
  leaseMs: count.describe('How long the lease lasts without a heartbeat or output batch renewing it.'),
  workspace: z.string(),
  command: z.string(),
  cwd: z.string(),
  env: z.record(z.string(), z.string()),
  mode: z.enum(['exec', 'start']),
  timeoutMs: count.nullable(),
  terminal: terminalSizeSchema
    .nullable()
    .optional()
    .describe('start with tty: the size of the pseudo-terminal the process runs on.'),
  workspaceVersion: count
    .nullable()
    .describe("The workspace's version when the job was leased (null when the workspace is gone)."),
  incarnation: z
    .string()
    .nullable()
    .describe('Which incarnation of the workspace (null when it is gone): a copy of one is kept apart from any other.'),
  outputChars: count.describe('Output older than this many characters is never kept.'),
  maxFileBytes: count.describe(
    'A larger file the command leaves is not kept: it is reported in conflicts, never uploaded.',
  ),
  maxBodyBytes: count.describe(
    'The largest request body taken: upload pieces and batches, and each sync, fit within it.',
  ),
});
export type LeasedJob = z.output<typeof leasedJobSchema>;

export const leaseAnswerSchema = z.looseObject({ job: leasedJobSchema });

export const manifestEntrySchema = z.looseObject({
  path: z.string(),
  type: z.enum(['file', 'dir', 'symlink']),
  blob: z.string().nullable().describe('Files: the SHA-256 of the content.'),
  target: z.string().nullable(),
  size: count,
  version: count,
});
export type ManifestRow = z.output<typeof manifestEntrySchema>;

export const manifestSchema = z.looseObject({ version: count, entries: z.array(manifestEntrySchema) });
export type ManifestAnswer = z.output<typeof manifestSchema>;
export const startedAnswerSchema = z.looseObject({ ok: z.literal(true) });
export const outputAnswerSchema = z.looseObject({ end: count.describe('The end offset of the output held.') });

/** What a heartbeat answers: stdin past the acknowledged seq, in order, and the stop request once there is one. */
export const heartbeatAnswerSchema = z.looseObject({
  /** Pending stdin in order; `seq` rises per process, so a runner acknowledging it never applies a chunk twice. */
  stdin: z.array(z.looseObject({ seq: count, data: z.string(), eof: z.boolean() })),
  /** Present on every heartbeat from the request on, so a lost reply loses nothing. */
  stop: z.looseObject({ graceMs: count }).nullable(),
});
export type ControlReply = z.output<typeof heartbeatAnswerSchema>;

/** What a sync-back committed, and what it left to the API's version. */
export const syncResultSchema = z.looseObject({
  /** Paths committed (deleted ones included). */
  committed: z.array(z.string()),
  /** Paths changed through the API since the command started (the API's version is kept), and files over the file limit (not kept). */
  conflicts: z.array(z.string()),
  /** Paths the command may not write (denylist, excluded, read-only root, outside), with why. */
  skipped: z.array(z.looseObject({ path: z.string(), reason: z.string() })),
  /** The workspace version the commit created, or null when nothing was committed. */
  version: count.nullable(),
});
export type SyncResult = z.output<typeof syncResultSchema>;

/** The committed paths that still exist, as the commit made them. */
export const syncAnswerSchema = syncResultSchema.extend({ entries: z.array(manifestEntrySchema) });
export type SyncAnswer = z.output<typeof syncAnswerSchema>;

export const blobPieceAnswerSchema = z
  .looseObject({
    received: count.describe('Bytes of the blob held from its start: the next piece goes at this offset.'),
    complete: z.boolean().describe('The blob is stored, and a sync may name it.'),
  })
  .describe('What the server holds of a blob uploaded in pieces.');
export type BlobPieceAnswer = z.output<typeof blobPieceAnswerSchema>;
export const blobUploadAnswerSchema = z.looseObject({
  stored: z.array(z.string()).describe('The ids of the blobs stored.'),
});

export const exitAnswerSchema = z.looseObject({ status: processStatusSchema });

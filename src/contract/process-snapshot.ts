// A bash process as the HTTP answers show it: its status, its snapshot and a page of its log.
import { z } from 'zod';
import { count, time } from './wire-values.ts';

export const processStatusSchema = z.enum(['queued', 'running', 'exited', 'stopped', 'failed', 'lost']);
export type ProcessStatus = z.output<typeof processStatusSchema>;

/** docs/api.md's process snapshot. */
export const processSnapshotSchema = z.looseObject({
  processId: z.string(),
  command: z.string(),
  cwd: z.string(),
  status: processStatusSchema,
  pid: z.number().int().nullable(),
  exitCode: z.number().int().nullable(),
  startedAt: time.nullable(),
  endedAt: time.nullable(),
});
export type ProcessSnapshot = z.output<typeof processSnapshotSchema>;

/** bash `logs`: characters of the log from `offset`, and where the next read starts. */
export const logPageSchema = z.looseObject({
  processId: z.string(),
  data: z.string(),
  offset: count,
  nextOffset: count,
  startOffset: count,
  truncated: z.boolean(),
  status: processStatusSchema,
});
export type LogPage = z.output<typeof logPageSchema>;

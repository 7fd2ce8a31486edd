// The durable record of one bash process, and what docs/api.md shows of it (the snapshot).
import type { ProcessSnapshot, ProcessStatus } from '../contract/process-snapshot.ts';
import type { TerminalSize } from '../contract/runner-protocol.ts';

export type { ProcessSnapshot, ProcessStatus };

export const FINAL_STATUSES: readonly ProcessStatus[] = ['exited', 'stopped', 'failed', 'lost'];

export interface ProcessRecord {
  id: string;
  /** The workspace id (public name) the process belongs to. */
  workspace: string;
  command: string;
  /** Canonical workspace-relative directory ('' is the root). */
  cwd: string;
  env: Record<string, string>;
  /** exec waits for the end; start returns at once. */
  mode: 'exec' | 'start';
  /** exec only: the runner kills the tree after this long. */
  timeoutMs: number | null;
  /** start only: the process runs on a pseudo-terminal of this size (`tty: true`); null: on pipes. */
  terminal: TerminalSize | null;
  status: ProcessStatus;
  /** The process id inside the runner's sandbox, once running. */
  pid: number | null;
  exitCode: number | null;
  timedOut: boolean;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** Why the process failed or was lost, or what its sync-back could not commit. */
  error: string | null;
  /** Paths the command changed that had also changed through the API: kept as the API left them. */
  conflicts: string[];
  /** Total characters of output ever appended (the end offset of the log). */
  outputChars: number;
}

export type { TerminalSize };

/** What a bash call asks to run: the part of a record its caller chooses (no terminal unless it says so). */
export type ProcessRequest = Pick<ProcessRecord, 'workspace' | 'command' | 'cwd' | 'env' | 'mode' | 'timeoutMs'> & {
  terminal?: TerminalSize | null;
};

/** The snapshot the HTTP answers show of a record. */
export function snapshotOf(record: ProcessRecord): ProcessSnapshot {
  return {
    processId: record.id,
    command: record.command,
    cwd: record.cwd,
    status: record.status,
    pid: record.pid,
    exitCode: record.exitCode,
    startedAt: record.startedAt,
    endedAt: record.endedAt,
  };
}

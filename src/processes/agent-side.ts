// The agent side of the process store: one workspace's processes (create, list, logs, stdin, stop, delete).
import { ToolError } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { LogPage } from '../contract/process-snapshot.ts';
import type { JobQueue } from './job-queue.ts';
import type { ProcessEvents } from './process-events.ts';
import { wellFormed, type ProcessLog } from './process-log.ts';
import type { ProcessRecord, ProcessRequest } from './process-record.ts';
import { isFinal, recordOf, selectProcess, updateProcess, type ProcessRow } from './process-row.ts';
import type { ExecResult } from './runner-reports.ts';

export interface AgentSideParts {
  db: SqlDatabase;
  jobs: JobQueue;
  log: ProcessLog;
  events: ProcessEvents;
  now: () => number;
  /** Wakes a runner's waiting lease request for a job just queued. */
  wakeRunners: () => void;
}

/** Each method does what ProcessStore's of the same name says. */
export class AgentSide {
  readonly #db: SqlDatabase;
  readonly #jobs: JobQueue;
  readonly #log: ProcessLog;
  readonly #events: ProcessEvents;
  readonly #now: () => number;
  readonly #wakeRunners: () => void;

  constructor(parts: AgentSideParts) {
    this.#db = parts.db;
    this.#jobs = parts.jobs;
    this.#log = parts.log;
    this.#events = parts.events;
    this.#now = parts.now;
    this.#wakeRunners = parts.wakeRunners;
  }

  create(input: ProcessRequest, inTransaction?: () => void): ProcessRecord {
    if (input.mode !== 'exec' && input.mode !== 'start')
      throw new ToolError('invalid_argument', `mode must be exec or start, not ${String(input.mode)}.`);
    if (input.timeoutMs !== null) nonNegativeInteger('timeoutMs', input.timeoutMs);
    const id = `proc_${crypto.randomUUID().replaceAll('-', '')}`;
    const now = this.#now();
    const record = this.#db.transaction(() => {
      const [row] = this.#db.query<ProcessRow>(
        `INSERT INTO processes (id, workspace, command, cwd, env, mode, timeout_ms, terminal, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?) RETURNING *`,
        id,
        input.workspace,
        wellFormed(input.command),
        input.cwd,
        JSON.stringify(input.env),
        input.mode,
        input.timeoutMs,
        input.terminal ? JSON.stringify({ cols: input.terminal.cols, rows: input.terminal.rows }) : null,
        new Date(now).toISOString(),
      );
      this.#jobs.enqueue(id, now);
      inTransaction?.();
      return recordOf(row!);
    });
    this.#events.queued();
    this.#wakeRunners();
    return record;
  }

  get(workspace: string, id: string): ProcessRecord | undefined {
    const row = selectProcess(this.#db, id);
    return row !== undefined && row.workspace === workspace ? recordOf(row) : undefined;
  }

  list(workspace: string): ProcessRecord[] {
    return this.#db
      .query<ProcessRow>('SELECT * FROM processes WHERE workspace = ? ORDER BY seq', workspace)
      .map(recordOf);
  }

  execResult(id: string): ExecResult | undefined {
    const [row] = this.#db.query<{ exec_result: string | null }>('SELECT exec_result FROM processes WHERE id = ?', id);
    return row?.exec_result == null ? undefined : (JSON.parse(row.exec_result) as ExecResult);
  }

  readLogs(workspace: string, id: string, offset: number | undefined, limit: number): LogPage {
    if (offset !== undefined) nonNegativeInteger('offset', offset);
    nonNegativeInteger('limit', limit);
    return this.#db.transaction(() => {
      const row = this.owned(workspace, id);
      const slice = this.#log.read(id, row.output_chars, offset, limit);
      return { processId: id, ...slice, nextOffset: slice.offset + slice.data.length, status: row.status };
    });
  }

  writeStdin(workspace: string, id: string, input: string, eof: boolean): number {
    const queued = this.#db.transaction(() => {
      const row = this.owned(workspace, id);
      if (isFinal(row))
        throw new ToolError('conflict', `process ${id} has ended (${row.status}), so it reads no more input.`, {
          processId: id,
        });
      if (row.stdin_closed !== 0) {
        throw new ToolError(
          'conflict',
          `the stdin of process ${id} is already closed by an eof; start a new process to send more input.`,
          { processId: id },
        );
      }
      if (input.length === 0 && !eof) return false;
      this.#db.query(
        `INSERT INTO process_stdin (process_id, seq, data, eof)
         VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM process_stdin WHERE process_id = ?), ?, ?)`,
        id,
        id,
        wellFormed(input),
        eof ? 1 : 0,
      );
      if (eof) this.#db.query('UPDATE processes SET stdin_closed = 1 WHERE id = ?', id);
      return true;
    });
    // Not a state change, but the runner's waiting control request hands it over at once.
    if (queued) this.#events.changed([id]);
    return input.length;
  }

  requestStop(workspace: string, id: string, graceMs: number): ProcessRecord {
    nonNegativeInteger('graceMs', graceMs);
    let changed = false;
    const record = this.#db.transaction(() => {
      const row = this.owned(workspace, id);
      if (isFinal(row)) return recordOf(row);
      changed = true;
      if (row.status === 'queued') {
        this.#jobs.complete(id, null);
        return updateProcess(
          this.#db,
          "UPDATE processes SET status = 'stopped', ended_at = ?, stop_requested_grace_ms = ? WHERE id = ? RETURNING *",
          this.#iso(),
          graceMs,
          id,
        );
      }
      // The first request stands: its runner may already be counting down that grace.
      return updateProcess(
        this.#db,
        'UPDATE processes SET stop_requested_grace_ms = COALESCE(stop_requested_grace_ms, ?) WHERE id = ? RETURNING *',
        graceMs,
        id,
      );
    });
    if (changed) this.#events.changed([id]);
    return record;
  }

  deleteWorkspace(workspace: string): void {
    const ids = this.#db.transaction(() => {
      const rows = this.#db.query<{ id: string }>('SELECT id FROM processes WHERE workspace = ?', workspace);
      const inWorkspace = 'IN (SELECT id FROM processes WHERE workspace = ?)';
      this.#db.query(`DELETE FROM process_output WHERE process_id ${inWorkspace}`, workspace);
      this.#db.query(`DELETE FROM process_stdin WHERE process_id ${inWorkspace}`, workspace);
      this.#db.query(`DELETE FROM process_syncs WHERE process_id ${inWorkspace}`, workspace);
      this.#jobs.deleteWorkspace(workspace);
      this.#db.query('DELETE FROM processes WHERE workspace = ?', workspace);
      return rows.map((row) => row.id);
    });
    this.#events.changed(ids);
  }

  /** The process's row, or `not_found` when it is absent or belongs to another workspace. */
  owned(workspace: string, id: string): ProcessRow {
    const row = selectProcess(this.#db, id);
    if (row === undefined || row.workspace !== workspace) {
      throw new ToolError(
        'not_found',
        `process ${id} was not found in workspace ${workspace}; list its processes to find the id.`,
        { processId: id },
      );
    }
    return row;
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

function nonNegativeInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new ToolError('invalid_argument', `${name} must be a whole number of 0 or more, not ${value}.`);
}

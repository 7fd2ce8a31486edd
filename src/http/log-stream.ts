// A process's log as Server-Sent Events: `output` events from an offset as the process writes, then one `exit` event with its snapshot.
import { Doorbell } from '../core/doorbell.ts';
import { ToolError } from '../core/errors.ts';
import { FINAL_STATUSES, snapshotOf } from '../processes/process-record.ts';
import type { LogPage, ProcessStore } from '../processes/process-store.ts';
import { eventFrame, frameBytes, KEEP_ALIVE_FRAME, revoked } from './event-stream.ts';

/** The most characters one `output` event carries; a longer backlog goes out as several. */
export const OUTPUT_EVENT_CHARS = 16_384;

/**
 * Pages read for the streams woken by one change, shared among them: streams of one process that
 * follow it closely wake together at the same offset, and one read (and one frame, encoded once)
 * serves them all. A page is kept until the process next changes or this turn of the event loop ends,
 * whichever comes first, so nothing stale is ever sent and nothing is held after.
 */
export class SharedLogPages {
  readonly #pages = new Map<string, Map<string, { page: LogPage; frame?: Uint8Array }>>();
  #sweepPlanned = false;

  constructor(private readonly processes: Pick<ProcessStore, 'readLogs' | 'onChange'>) {
    processes.onChange((id) => this.#pages.delete(id));
  }

  read(
    workspace: string,
    processId: string,
    offset: number | undefined,
    limit: number,
  ): { page: LogPage; frame?: Uint8Array } {
    let pages = this.#pages.get(processId);
    const key = `${workspace}\u0000${offset ?? ''}\u0000${limit}`;
    const held = pages?.get(key);
    if (held) return held;
    const page = { page: this.processes.readLogs(workspace, processId, offset, limit) };
    if (!pages) this.#pages.set(processId, (pages = new Map()));
    pages.set(key, page);
    if (!this.#sweepPlanned) {
      this.#sweepPlanned = true;
      setTimeout(() => {
        this.#sweepPlanned = false;
        this.#pages.clear();
      }, 0);
    }
    return page;
  }
}

export interface LogFollow {
  processes: Pick<ProcessStore, 'get' | 'onChange'>;
  pages: SharedLogPages;
  workspace: string;
  processId: string;
  /** Whether the stream's key is still live: asked at most once every keepAliveMs; a revoked key ends the stream. */
  keyLive: () => Promise<boolean>;
  /** The first character to send; undefined for the oldest the log holds. */
  from: number | undefined;
  keepAliveMs: number;
}

/**
 * The frames of one log stream. Each `output` event's `id` is the offset after its data, so a
 * client that resumes from it receives every later character once. An offset the ring buffer has
 * dropped is reported as `logs` reports it: the event starts at the oldest offset still held and
 * carries `truncated: true`. Output is read when the process store tells of a change to this
 * process, never on a timer; a quiet stream sends a keep-alive comment every `keepAliveMs`.
 */
export async function* logEvents(
  follow: LogFollow,
  signal: AbortSignal,
): AsyncGenerator<string | Uint8Array, void, undefined> {
  const { processes, workspace, processId } = follow;
  const bell = new Doorbell();
  const stopListening = processes.onChange((id) => {
    if (id === processId) bell.ring();
  });
  try {
    let cursor = follow.from;
    let keyCheckedAt = Date.now();
    while (!signal.aborted) {
      if (Date.now() - keyCheckedAt >= follow.keepAliveMs) {
        keyCheckedAt = Date.now();
        if (!(await follow.keyLive())) throw revoked();
      }
      // Cleared before reading: a change while reading rings again, so the wait below ends at once.
      bell.clear();
      const shared = follow.pages.read(workspace, processId, cursor, OUTPUT_EVENT_CHARS);
      const { page } = shared;
      cursor = page.nextOffset;
      if (page.data.length > 0 || page.truncated) {
        shared.frame ??= frameBytes(
          eventFrame(
            'output',
            { data: page.data, offset: page.offset, ...(page.truncated ? { truncated: true } : {}) },
            page.nextOffset,
          ),
        );
        yield shared.frame;
        continue;
      }
      if (FINAL_STATUSES.includes(page.status)) {
        const record = processes.get(workspace, processId);
        if (!record) throw gone(processId);
        yield eventFrame('exit', { ...snapshotOf(record), error: record.error, conflicts: record.conflicts }, cursor);
        return;
      }
      const woke = await bell.wait(follow.keepAliveMs, signal);
      if (woke === 'idle') yield KEEP_ALIVE_FRAME;
    }
  } finally {
    stopListening();
  }
}

function gone(processId: string): ToolError {
  return new ToolError('not_found', `process ${processId} was deleted with its workspace while it was streamed.`, {
    processId,
  });
}

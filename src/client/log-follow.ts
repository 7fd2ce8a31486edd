// Following a process's log stream: its output chunks as the process writes them, across dropped connections, to the exit snapshot.
import type { BashStatusResult } from './tool-types.ts';
import { readServerEvents } from '../core/server-events.ts';
import { ToolgateError } from './toolgate-error.ts';

/** One `output` event: characters of the log from `offset`; `truncated` when the offset asked for had been dropped. */
export interface LogChunk {
  data: string;
  offset: number;
  truncated?: boolean;
}

export interface FollowLogsOptions {
  /** The first character wanted (default: the oldest the log holds). */
  offset?: number;
  signal?: AbortSignal;
}

/** Connections in a row that may drop before any event, before following gives up. */
const RETRIES_WITHOUT_PROGRESS = 3;

/**
 * Yields each output chunk and returns the exit event's snapshot. `open` sends the stream's GET,
 * given the id of the last event received (undefined at first): a connection that ends before the
 * exit event is opened again from there, so every character comes once. A refused request throws
 * ToolgateError; an `error` event (the process deleted while followed) throws it too.
 */
export async function* followProcessLog(
  open: (lastEventId: string | undefined) => Promise<Response>,
  signal: AbortSignal | undefined,
): AsyncGenerator<LogChunk, BashStatusResult, undefined> {
  let lastEventId: string | undefined;
  let fruitless = 0;
  for (;;) {
    const response = await open(lastEventId);
    if (response.status !== 200 || !response.body) throw await ToolgateError.fromResponse(response);
    let progressed = false;
    try {
      for await (const event of readServerEvents(response.body)) {
        if (event.event === 'output') {
          progressed = true;
          if (event.id !== undefined) lastEventId = event.id;
          yield JSON.parse(event.data) as LogChunk;
        } else if (event.event === 'exit') {
          return JSON.parse(event.data) as BashStatusResult;
        } else if (event.event === 'error') {
          const { error } = JSON.parse(event.data) as { error: { code: ToolgateError['code']; message: string } };
          throw new ToolgateError({ status: 200, code: error.code, message: error.message, body: event.data });
        }
      }
    } catch (error) {
      // An abort is the caller's; a ToolgateError is the server's word. Anything else is a dropped connection.
      if (signal?.aborted || error instanceof ToolgateError) throw error;
    }
    fruitless = progressed ? 0 : fruitless + 1;
    if (fruitless > RETRIES_WITHOUT_PROGRESS)
      throw new ToolgateError({
        status: 200,
        code: 'unavailable',
        message: `The log stream ended ${fruitless} times in a row before any event; follow it again later.`,
      });
  }
}

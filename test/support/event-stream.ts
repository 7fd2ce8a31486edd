// Opens a Server-Sent Events stream of the API for a test and reads its events one at a time, or its error answer.
import { readServerEvents, type ServerEvent } from '../../src/core/server-events.ts';

export interface OpenedStream {
  status: number;
  contentType: string | null;
  /** The error answer's JSON when the status is not 200. */
  body: any;
  /** The next event (comments skipped), or undefined when the stream ended. */
  next(): Promise<ServerEvent | undefined>;
  /** Reads events until `stop` holds for one (answered) or the stream ends (undefined). */
  until(stop: (event: ServerEvent) => boolean): Promise<ServerEvent | undefined>;
  /** Drops the connection at once, as a client that goes away does. */
  close(): void;
}

export async function openStream(
  url: string,
  key: string | undefined,
  path: string,
  headers: Record<string, string> = {},
): Promise<OpenedStream> {
  const abort = new AbortController();
  const response = await fetch(url + path, {
    headers: { accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    signal: abort.signal,
  });
  const contentType = response.headers.get('content-type');
  if (response.status !== 200 || !response.body) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Shown as text.
    }
    return {
      status: response.status,
      contentType,
      body,
      next: async () => undefined,
      until: async () => undefined,
      close: () => undefined,
    };
  }
  const events = readServerEvents(response.body);
  const next = async () => {
    try {
      const { value, done } = await events.next();
      return done ? undefined : value;
    } catch (error) {
      if (abort.signal.aborted) return undefined;
      throw error;
    }
  };
  return {
    status: 200,
    contentType,
    body: undefined,
    next,
    async until(stop) {
      for (;;) {
        const event = await next();
        if (event === undefined || stop(event)) return event;
      }
    },
    close: () => abort.abort(),
  };
}

/** The output events' data of a log stream up to its exit event: their text, each event's offset and id, and the exit snapshot. */
export async function readLogToExit(stream: OpenedStream): Promise<{
  text: string;
  events: { offset: number; id: number; length: number; truncated?: boolean }[];
  exit: any;
}> {
  let text = '';
  const events: { offset: number; id: number; length: number; truncated?: boolean }[] = [];
  for (;;) {
    const event = await stream.next();
    if (event === undefined) throw new Error(`the stream ended without an exit event after ${JSON.stringify(text)}`);
    if (event.event === 'exit') return { text, events, exit: { ...JSON.parse(event.data), id: Number(event.id) } };
    if (event.event !== 'output') throw new Error(`unexpected event ${event.event}: ${event.data}`);
    const output = JSON.parse(event.data) as { data: string; offset: number; truncated?: boolean };
    text += output.data;
    events.push({
      offset: output.offset,
      id: Number(event.id),
      length: output.data.length,
      truncated: output.truncated,
    });
  }
}

// Server-Sent Events as a Response: frames pulled from a source as the client reads them (so a slow
// client holds the source back rather than a buffer growing), released at once when the client goes.
import { errorBody, INTERNAL_MESSAGE, isToolError, ToolError } from '../core/errors.ts';
import type { Log } from '../core/log.ts';

/** Proxies commonly close a connection idle for 30 to 60 s: a comment goes out after this much quiet. */
export const KEEP_ALIVE_MS = 15_000;

/** A comment line: ignored by every SSE client, it keeps an idle connection open. */
export const KEEP_ALIVE_FRAME = ': keep-alive\n\n';

/** A stream's key was revoked while it was open: the stream ends with this as its `error` event. */
export function revoked(): ToolError {
  return new ToolError('unauthorized', 'The key this stream was opened with was revoked; the stream ends.');
}

/** One event; `data` is sent as one line of JSON, so it never needs splitting. */
export function eventFrame(event: string, data: unknown, id?: number | string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const encoder = new TextEncoder();

/**
 * A frame as the bytes a stream sends: a source that sends one frame on many streams encodes it once
 * and yields these. Streams only read a chunk, never write to it, so one array serves them all.
 */
export function frameBytes(frame: string): Uint8Array {
  return encoder.encode(frame);
}

/** How a stream ended: its source ran out, the client went, or the source failed (an `error` event was the last, its code given too). */
export type StreamEnd = 'ok' | 'closed' | 'error';

export interface EventStreamOptions {
  /** Signals that end the stream when they abort: the request's (the client went, where the platform tells of it), the server's stop. */
  endSignals?: AbortSignal[];
  /** Called once, when the stream ends however it ends, with the bytes sent. */
  onEnd?: (end: StreamEnd, bytesOut: number, code?: string) => void;
  log: Log;
}

/**
 * A `text/event-stream` answer whose frames come from `source`, pulled one at a time as the client
 * reads. `source` is given a signal that aborts when the client goes; it must end its waits then.
 * A ToolError the source throws ends the stream with an `error` event carrying the contract's error
 * body; anything else is logged and sent as `internal`.
 */
export function eventStreamResponse(
  source: (signal: AbortSignal) => AsyncGenerator<string | Uint8Array, void, undefined>,
  options: EventStreamOptions,
): Response {
  const closing = new AbortController();
  const frames = source(closing.signal);
  let bytesOut = 0;
  let ended = false;
  const end = (how: StreamEnd, code?: string) => {
    if (ended) return;
    ended = true;
    closing.abort();
    for (const signal of options.endSignals ?? []) signal.removeEventListener('abort', onClientGone);
    // A source suspended at a yield runs its `finally` now; one waiting has been woken by the abort.
    void frames.return(undefined).catch(() => undefined);
    options.onEnd?.(how, bytesOut, code);
  };
  const onClientGone = () => end('closed');
  for (const signal of options.endSignals ?? []) signal.addEventListener('abort', onClientGone);
  if (options.endSignals?.some((signal) => signal.aborted)) end('closed');

  const send = (controller: ReadableStreamDefaultController<Uint8Array>, frame: string | Uint8Array) => {
    const bytes = typeof frame === 'string' ? encoder.encode(frame) : frame;
    bytesOut += bytes.length;
    controller.enqueue(bytes);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // A first comment, so the client has the answer's head (and knows the stream is open) at once.
        send(controller, ': open\n\n');
      },
      async pull(controller) {
        if (ended) return;
        let frame: IteratorResult<string | Uint8Array, void>;
        try {
          frame = await frames.next();
        } catch (error) {
          if (ended) return;
          if (!isToolError(error)) options.log('an event stream failed', error);
          const failure = isToolError(error)
            ? errorBody(error.code, error.message, error.details)
            : errorBody('internal', INTERNAL_MESSAGE);
          send(controller, eventFrame('error', failure));
          end('error', failure.error.code);
          controller.close();
          return;
        }
        if (ended) return;
        if (frame.done) {
          end('ok');
          controller.close();
          return;
        }
        send(controller, frame.value);
      },
      cancel() {
        end('closed');
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // nginx and others buffer answers unless told not to; events must go out as they come.
      'x-accel-buffering': 'no',
    },
  });
}

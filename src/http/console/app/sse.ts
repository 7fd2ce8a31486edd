// Server-Sent Events over fetch: EventSource cannot send the Authorization header, so the console reads the stream itself.
import { readServerEvents } from '../../../core/server-events.ts';
import { ApiError, type Api } from './api.ts';

export interface StreamEvent {
  event: string;
  data: string;
  id?: string;
}

/** Calls `onEvent` for each event of an SSE body (core/server-events.ts reads it); resolves when the body ends. */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: StreamEvent) => void,
): Promise<void> {
  for await (const { event, data, id } of readServerEvents(body))
    onEvent({ event, data, ...(id === undefined ? {} : { id }) });
}

export interface FollowOptions {
  /** Called once each time the stream is (re)connected, before its first event. */
  onOpen?: () => void;
  onEvent: (event: StreamEvent) => void;
  onError?: (error: unknown) => void;
  /** True when the stream is finished for good (an `exit` event): no reconnection then. */
  done?: () => boolean;
}

/** The statuses of the codes a stream's `error` event may carry that no reconnection mends. */
const FINAL_CODES: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  tool_not_allowed: 403,
  not_found: 404,
  invalid_argument: 400,
};

/** A refusal (a revoked key, a scope or allowlist that says no) is for good; anything else may pass. */
export function isFinal(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

/** The failure an `error` event carries, as the API's error body spells it. */
function streamError(data: string): ApiError {
  try {
    const { error } = JSON.parse(data) as { error: { code: string; message: string; details?: unknown } };
    return new ApiError(FINAL_CODES[error.code] ?? 500, error.code, error.message, error.details);
  } catch {
    return new ApiError(500, 'internal', 'The stream ended with an error it did not describe.');
  }
}

/**
 * Follows a stream until `signal` aborts or `done()` holds, reconnecting after a drop with the
 * last event id (`Last-Event-ID`), so nothing is missed or repeated. A refusal (the key revoked,
 * out of scope) ends it, reported to `onError`, rather than being asked again and again.
 */
export async function follow(api: Api, path: string, signal: AbortSignal, options: FollowOptions): Promise<void> {
  let lastId: string | undefined;
  let pause = 500;
  let refused = false;
  while (!signal.aborted && !options.done?.()) {
    try {
      const response = await api.open(path, lastId === undefined ? {} : { 'last-event-id': lastId }, signal);
      options.onOpen?.();
      pause = 500;
      await readEvents(response.body!, (event) => {
        if (event.id !== undefined) lastId = event.id;
        if (event.event !== 'error') return options.onEvent(event);
        const failure = streamError(event.data);
        refused ||= isFinal(failure);
        options.onError?.(failure);
      });
    } catch (error) {
      if (signal.aborted) return;
      options.onError?.(error);
      refused ||= isFinal(error);
      pause = Math.min(pause * 2, 10_000);
    }
    if (signal.aborted || refused || options.done?.()) return;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

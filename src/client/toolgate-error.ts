// What the client throws: the contract's error body as an Error, or a server it could not reach.
import type { ErrorCode } from '../core/errors.ts';

/** A code the client gives an answer that is not the contract's error body (a proxy's HTML page, say). */
export const UNEXPECTED_RESPONSE = 'unexpected_response';

/** The server answered with an error: its HTTP status and the contract's code, message and details. */
export class ToolgateError extends Error {
  readonly status: number;
  /** A code of docs/api.md's table, or `unexpected_response` when the body is not an error body. */
  readonly code: ErrorCode | typeof UNEXPECTED_RESPONSE;
  readonly details: Record<string, unknown> | undefined;
  /** The whole decoded body, for fields beside `error` (a rejection's `stopReason`). */
  readonly body: unknown;
  /** Seconds to wait before retrying, from `Retry-After` (rate_limited). */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    code: ToolgateError['code'];
    message: string;
    details?: Record<string, unknown>;
    body?: unknown;
    retryAfterSeconds?: number;
  }) {
    super(init.message);
    this.name = 'ToolgateError';
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.body = init.body;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }

  /** Reads an answer the client did not expect into an error, whatever its body holds. */
  static async fromResponse(response: Response): Promise<ToolgateError> {
    const text = await response.text();
    const body = parseJson(text);
    const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
    const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
    const error = isErrorBody(body) ? body.error : undefined;
    if (error) {
      return new ToolgateError({
        status: response.status,
        code: error.code as ErrorCode,
        message: error.message,
        details: error.details,
        body,
        retryAfterSeconds,
      });
    }
    const excerpt = text.length > 200 ? `${text.slice(0, 200)}...` : text;
    return new ToolgateError({
      status: response.status,
      code: UNEXPECTED_RESPONSE,
      message: `${response.url || 'The server'} answered ${response.status} with a body that is not a toolgate answer: ${JSON.stringify(excerpt)}.`,
      body: body ?? text,
      retryAfterSeconds,
    });
  }
}

/** The server could not be reached at all (refused, reset, DNS, TLS): nothing is known to have happened. */
export class ToolgateConnectionError extends Error {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    super(`Could not reach the toolgate server at ${url}: ${describeCause(cause)}.`, { cause });
    this.name = 'ToolgateConnectionError';
    this.url = url;
  }
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorBody(
  body: unknown,
): body is { error: { code: string; message: string; details?: Record<string, unknown> } } {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = (body as { error: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** fetch's own message is often only "fetch failed"; the reason (ECONNREFUSED ...) is in its cause. */
function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (let error = cause, depth = 0; error instanceof Error && depth < 4; error = error.cause, depth += 1) {
    const code = (error as { code?: unknown }).code;
    parts.push(
      typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message,
    );
  }
  return parts.length > 0 ? parts.join(': ') : String(cause);
}

// A tool call's answer as it is sent: a status, the JSON text and extra headers.
import { errorBody, errorStatus, INTERNAL_MESSAGE, isToolError } from './errors.ts';

/** An answer ready to send: the status, the JSON text and extra headers. */
export interface CallAnswer {
  status: number;
  json: string;
  headers: Record<string, string>;
}

export function errorAnswer(error: unknown): CallAnswer {
  if (!isToolError(error)) return jsonAnswer(500, errorBody('internal', INTERNAL_MESSAGE));
  const headers: Record<string, string> = {};
  if (error.code === 'rate_limited' && typeof error.details?.retryAfterSeconds === 'number')
    headers['retry-after'] = String(error.details.retryAfterSeconds);
  return { ...jsonAnswer(errorStatus[error.code], errorBody(error.code, error.message, error.details)), headers };
}

export function jsonAnswer(status: number, body: unknown): CallAnswer {
  return { status, json: JSON.stringify(body), headers: {} };
}

/** The UTF-8 bytes of an answer's text, as metered. */
export function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

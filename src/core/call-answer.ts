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

const encoder = new TextEncoder();
/** Where byteLength encodes, a piece at a time: reused, since only the count is kept. */
const scratch = new Uint8Array(64 * 1024);

/**
 * The UTF-8 bytes of an answer's text, as metered. Encoded into one reused buffer a piece at a
 * time (the encoder never splits a surrogate pair across pieces): no allocation per answer.
 */
export function byteLength(text: string): number {
  let read = 0;
  let written = 0;
  while (read < text.length) {
    const piece = encoder.encodeInto(read === 0 ? text : text.slice(read), scratch);
    read += piece.read;
    written += piece.written;
  }
  return written;
}

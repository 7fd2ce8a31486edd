// Reads a JSON request body, counting the bytes actually received against the limit.
import { ToolError } from '../core/errors.ts';
import { concatBytes } from '../core/bytes.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The parsed body, or `undefined` for an empty one when `optional`. The limit is enforced
 * on the streamed bytes, so a chunked body without Content-Length cannot slip past it.
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  options: { optional?: boolean; onBytes?: (bytes: number) => void } = {},
): Promise<unknown> {
  const bytes = await readBodyBytes(request, maxBytes);
  options.onBytes?.(bytes.byteLength);
  if (bytes.byteLength === 0 && options.optional) return undefined;
  return parseJsonBytes(bytes, request.headers.get('content-type'));
}

/** A body already read, parsed as JSON: it must be non-empty UTF-8 JSON sent as application/json. */
export function parseJsonBytes(bytes: Uint8Array, contentType: string | null): unknown {
  if (bytes.byteLength === 0) {
    throw new ToolError(
      'invalid_argument',
      'The request body is empty; send a JSON object with Content-Type: application/json.',
    );
  }
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType ?? '')) {
    throw new ToolError('invalid_argument', 'The request body must be JSON sent with Content-Type: application/json.', {
      contentType: contentType || null,
    });
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ToolError('invalid_argument', 'The request body is not valid UTF-8; send UTF-8 encoded JSON.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ToolError(
      'invalid_argument',
      `The request body is not valid JSON (${(error as Error).message}); send one JSON object.`,
    );
  }
}

/** The whole body as bytes, refused with `payload_too_large` (413) past `maxBytes` received. */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  // With a Content-Length within the limit the HTTP parser delivers exactly that many bytes, so the
  // fast whole-body read is bounded. Without one (chunked), or with one over the limit, the bytes are
  // counted as they stream in, and an over-limit rest is read and dropped: refused before it is
  // read, a client still sending gets a reset connection instead of the 413 (seen on the Worker).
  return declared !== null && Number(declared) <= maxBytes
    ? new Uint8Array(await request.arrayBuffer())
    : readLimited(request, maxBytes);
}

async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await discardRest(reader, total, maxBytes);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

/**
 * Reads the rest of an over-limit body and drops it, so the client, still sending, gets the 413
 * instead of a reset connection. A body far beyond the limit is cut off (its client sees a reset).
 */
async function discardRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  received: number,
  maxBytes: number,
): Promise<void> {
  const cap = Math.max(4 * maxBytes, 64 * 1024 * 1024);
  for (let total = received; total <= cap;) {
    const { done, value } = await reader.read();
    if (done) return;
    total += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
}

function tooLarge(maxBytes: number): ToolError {
  return new ToolError(
    'payload_too_large',
    `The request body is over the limit of ${maxBytes} bytes; send less, e.g. split the file into appends.`,
    {
      limit: maxBytes,
    },
  );
}

/** Requires a JSON object (not an array, string or null) as the body. */
export function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ToolError('invalid_argument', 'The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

// How the client reaches the server: a request built from its plan (a JSON body or raw bytes, a
// query, the API key), sent over the fetch it was given, and sent once more when it may be.
import { ToolgateConnectionError } from './toolgate-error.ts';

export type Query = Record<string, string | number | boolean | undefined>;

/** Bytes sent as they are (an archive), not encoded as JSON. */
export type RawBody = Uint8Array | Blob | ReadableStream<Uint8Array>;

export interface RequestPlan {
  query?: Query;
  headers?: Record<string, string>;
  body?: unknown;
  raw?: RawBody;
  signal?: AbortSignal;
}

export class ServerConnection {
  readonly #key: string | undefined;
  readonly #fetch: typeof fetch;

  /** `url` without a trailing slash; `fetch` the one the client was given, if any. */
  constructor(
    readonly url: string,
    key: string | undefined,
    fetcher: typeof fetch | undefined,
  ) {
    this.#key = key;
    // Called through a closure: a Worker's global fetch refuses to run as a method of another object.
    this.#fetch = fetcher ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Sends one request; an unreachable server is a ToolgateConnectionError, an abort the caller's own error. */
  async send(method: string, path: string, plan: RequestPlan = {}): Promise<Response> {
    const headers: Record<string, string> = { ...plan.headers };
    if (this.#key !== undefined) headers.authorization = `Bearer ${this.#key}`;
    const init: RequestInit = { method, headers };
    if (plan.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(plan.body);
    }
    if (plan.raw !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      init.body = plan.raw as NonNullable<RequestInit['body']>;
      // fetch sends a stream only when told it may (the request goes out before the answer comes).
      if (plan.raw instanceof ReadableStream) Object.assign(init, { duplex: 'half' });
    }
    if (plan.signal) init.signal = plan.signal;
    const url = this.url + path + queryString(plan.query);
    try {
      return await this.#fetch(url, init);
    } catch (error) {
      // An abort is the caller's own doing, not an unreachable server.
      if (plan.signal?.aborted) throw error;
      // A kept-alive connection the server (or a proxy before it) closed while it sat idle fails
      // the next request sent on it before any answer (a caller whose event loop was busy when the
      // close came has not heard of it yet): a GET, which changes nothing, goes again once, and so
      // does a PUT whose body can be sent again, every PUT of the contract being idempotent (an
      // archive applied twice leaves the same tree; a workspace created is confirmed).
      const resendable = method === 'GET' || (method === 'PUT' && !(plan.raw instanceof ReadableStream));
      if (resendable && closedBeforeAnswer(error)) {
        try {
          return await this.#fetch(url, init);
        } catch (again) {
          if (plan.signal?.aborted) throw again;
          throw new ToolgateConnectionError(this.url, again);
        }
      }
      throw new ToolgateConnectionError(this.url, error);
    }
  }
}

/**
 * Whether fetch failed because the connection was closed under it: undici's "other side closed",
 * a reset, or a body's write to a closed socket (EPIPE).
 */
function closedBeforeAnswer(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

function queryString(query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A value as one segment of a request's path (a workspace id, a tool name, a key id). */
export function segment(value: string): string {
  return encodeURIComponent(value);
}

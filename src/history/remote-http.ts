// The http client an import gives isomorphic-git: its web client's shape over the egress fetch, bounded in bytes and time, with the remote's failures as contract errors.
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { concatBytes } from '../core/bytes.ts';
import type { EgressFetch } from '../core/egress-fetch.ts';
import { isToolError, ToolError } from '../core/errors.ts';

/** A remote as the caller named it: the URL fetched (credentials included) and the URL shown in answers and logs (without them). */
export interface RemoteUrl {
  fetch: string;
  shown: string;
}

/** Only http(s) remotes: smart HTTP is the one protocol a request handler can speak on every home. */
export function parseRemoteUrl(raw: string): RemoteUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError(
      'invalid_argument',
      'git.url is not a URL; give the http(s) URL of a git repository, e.g. https://github.com/owner/repo.git.',
      { field: 'git.url' },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(
      'invalid_argument',
      `Only http(s) git URLs can be imported (smart HTTP), not ${url.protocol}; use the repository's https URL.`,
      { field: 'git.url' },
    );
  }
  const shown = new URL(url.href);
  shown.username = '';
  shown.password = '';
  return { fetch: url.href, shown: shown.href };
}

/**
 * Sends every request through `egress` (so each host and redirect is checked) as
 * isomorphic-git's web client does; fails the response body once more than `maxBytes` arrived,
 * and every request once `signal` fires.
 */
export function boundedHttp(egress: EgressFetch, maxBytes: number, limitName: string, signal: AbortSignal): HttpClient {
  return {
    async request({ url, method = 'GET', headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const response = await egress(url, {
        method,
        headers,
        body: body === undefined ? undefined : await collect(body),
        signal,
      });
      const answered: Record<string, string> = {};
      response.headers.forEach((value, name) => (answered[name] = value));
      return {
        url: response.url || url,
        method,
        statusCode: response.status,
        statusMessage: response.statusText,
        headers: answered,
        body: bounded(chunks(response.body), maxBytes, limitName),
      };
    },
  };
}

/** The request body in one piece: the requests git sends are small (wants and haves). */
async function collect(body: AsyncIterableIterator<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part);
    size += part.byteLength;
  }
  return concatBytes(parts, size);
}

/** The stream's chunks; a reader that stops early cancels the stream, so the connection closes. */
async function* chunks(stream: ReadableStream<Uint8Array> | null): AsyncIterableIterator<Uint8Array> {
  if (stream === null) return;
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

async function* bounded(
  body: AsyncIterableIterator<Uint8Array> | undefined,
  maxBytes: number,
  limitName: string,
): AsyncIterableIterator<Uint8Array> {
  if (body === undefined) return;
  let received = 0;
  for await (const chunk of body) {
    received += chunk.byteLength;
    if (received > maxBytes) {
      throw new ToolError(
        'payload_too_large',
        `The repository sends more than ${maxBytes} bytes (${limitName}); import a smaller repository or ref, or raise the limit.`,
        { limit: limitName, maxBytes },
      );
    }
    yield chunk;
  }
}

/** What went wrong talking to the remote, said without its credentials. */
export function remoteError(error: unknown, remote: RemoteUrl, ref: string, timeoutMs: number): ToolError {
  if (isToolError(error)) {
    // The egress rule refused a host (perhaps one a redirect named): the answer names the remote as the caller gave it, as every import error does.
    if (error.code === 'forbidden' && error.details?.remoteStatus === undefined) {
      const { address } = error.details ?? {};
      return new ToolError(
        'forbidden',
        error.message,
        address === undefined ? { url: remote.shown } : { url: remote.shown, address },
      );
    }
    return error;
  }
  const failure = error as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    data?: { statusCode?: number };
    cause?: unknown;
  };
  const url = remote.shown;
  if (failure.code === 'HttpError') {
    const status = failure.data?.statusCode ?? 0;
    if (status === 401 || status === 403) {
      return new ToolError(
        'forbidden',
        `The git remote ${url} refused access (HTTP ${status}); import a public repository, or put credentials in the URL (https://user:token@host/...).`,
        { url, remoteStatus: status },
      );
    }
    if (status === 404)
      return new ToolError('invalid_argument', `There is no git repository at ${url} (HTTP 404); check the URL.`, {
        url,
        remoteStatus: status,
      });
    return new ToolError('unavailable', `The git remote ${url} answered HTTP ${status}; retry later.`, {
      url,
      remoteStatus: status,
    });
  }
  if (failure.code === 'SmartHttpError')
    return new ToolError(
      'invalid_argument',
      `${url} does not speak git's smart HTTP protocol; give the URL of a git repository.`,
      { url },
    );
  if (failure.code === 'NotFoundError')
    return new ToolError('invalid_argument', `The git remote ${url} has no ref ${ref}; name a branch or tag it has.`, {
      url,
      ref,
    });
  if (failure.code === 'RemoteCapabilityError')
    return new ToolError(
      'invalid_argument',
      `The git remote ${url} cannot send a shallow history; import it without depth.`,
      { url },
    );
  if (failure.name === 'TimeoutError' || failure.name === 'AbortError') {
    return new ToolError(
      'timeout',
      `The git remote ${url} did not send the repository within ${timeoutMs} ms; retry, or import a smaller ref.`,
      { url, timeoutMs },
    );
  }
  if (failure.name === 'TypeError')
    return new ToolError('unavailable', `The git remote ${url} could not be reached; check the URL and retry.`, {
      url,
    });
  const message = typeof failure.message === 'string' ? failure.message.replaceAll(remote.fetch, url) : String(error);
  return new ToolError(
    'unavailable',
    `The import from ${url} failed (${message}); retry, and report it if it persists.`,
    { url },
  );
}

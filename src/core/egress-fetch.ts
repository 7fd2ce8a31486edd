// The egress port: the fetch git imports and approval notices go out through, which checks every host it connects to and follows redirects itself.
import { isToolError, ToolError } from './errors.ts';
import { ALLOW_HOSTS_SETTING, shownUrl } from './egress-policy.ts';

/**
 * A fetch whose every connection passed the egress rule, redirects included (each hop checked
 * again). A refused host throws `forbidden` before anything is sent; network failures are
 * TypeErrors and an aborted signal rejects with its reason, as with fetch.
 */
export type EgressFetch = (url: string, init?: RequestInit) => Promise<Response>;

/** One request as a hop sends it: the body in bytes, so a 307 or 308 can send it again. */
export interface EgressRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: Uint8Array | undefined;
  signal: AbortSignal | undefined;
}

/** Checks the request's host (throwing `forbidden` when it is refused), then sends it to the address it checked; never follows a redirect. */
export type EgressHop = (request: EgressRequest) => Promise<Response>;

export const MAX_REDIRECTS = 5;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that speak for the caller to one origin only, dropped when a redirect leaves it (as fetch does with authorization). */
const ORIGIN_BOUND = ['authorization', 'cookie', 'proxy-authorization'];
/** Headers that describe a body, dropped when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/**
 * An EgressFetch over one home's hop: `redirect: 'manual'` answers the redirect itself,
 * `'error'` fails on one, and `'follow'` (the default) follows at most `maxRedirects`, with
 * fetch's method and header rules.
 */
export function followingRedirects(hop: EgressHop, maxRedirects = MAX_REDIRECTS): EgressFetch {
  return async (input, init = {}) => {
    let request: EgressRequest = {
      url: new URL(input),
      method: (init.method ?? 'GET').toUpperCase(),
      headers: new Headers(init.headers),
      body: init.body == null ? undefined : new Uint8Array(await new Response(init.body).arrayBuffer()),
      signal: init.signal ?? undefined,
    };
    let from: URL | undefined;
    for (let redirects = 0; ; redirects += 1) {
      const response = await hopFrom(hop, request, from);
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || location === null || init.redirect === 'manual') return response;
      await response.body?.cancel();
      if (init.redirect === 'error')
        throw new TypeError(`${shownUrl(request.url)} redirects, and this request follows no redirects.`);
      if (redirects >= maxRedirects) {
        throw new ToolError(
          'unavailable',
          `${shownUrl(request.url)} redirected more than ${maxRedirects} times; give the URL it finally answers at.`,
          { url: shownUrl(request.url) },
        );
      }
      from = request.url;
      request = redirected(request, response.status, new URL(location, request.url));
    }
  };
}

/** One hop; a refusal after a redirect says which URL sent it there. */
async function hopFrom(hop: EgressHop, request: EgressRequest, from: URL | undefined): Promise<Response> {
  try {
    if (request.url.protocol !== 'http:' && request.url.protocol !== 'https:') {
      throw new ToolError(
        'forbidden',
        `toolgate connects over http(s) only, not ${request.url.protocol}; ${ALLOW_HOSTS_SETTING} does not change that.`,
        { url: shownUrl(request.url) },
      );
    }
    return await hop(request);
  } catch (error) {
    if (from === undefined || !isToolError(error) || error.code !== 'forbidden') throw error;
    throw new ToolError('forbidden', `${shownUrl(from)} redirects to ${shownUrl(request.url)}; ${error.message}`, {
      ...error.details,
      redirectedFrom: shownUrl(from),
    });
  }
}

/** The request a redirect asks for, by fetch's rules: 303 (and 301/302 after a POST) becomes a GET without a body. */
function redirected(request: EgressRequest, status: number, url: URL): EgressRequest {
  const headers = new Headers(request.headers);
  let { method, body } = request;
  if (
    (status === 303 && method !== 'GET' && method !== 'HEAD') ||
    ((status === 301 || status === 302) && method === 'POST')
  ) {
    method = 'GET';
    body = undefined;
    for (const name of BODY_HEADERS) headers.delete(name);
  }
  if (url.origin !== request.url.origin) for (const name of ORIGIN_BOUND) headers.delete(name);
  return { ...request, url, method, headers, body };
}

/** The egress of a server given none: every connection refused, so nothing leaves by accident. */
export const noEgress: EgressFetch = async (input) => {
  const url = new URL(input);
  throw new ToolError(
    'forbidden',
    `This toolgate was built without outgoing connections, so it does not connect to ${url.hostname}.`,
    { url: shownUrl(url) },
  );
};

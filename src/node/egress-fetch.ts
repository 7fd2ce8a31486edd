// The Node home's egress: resolves a host once, checks every address it got, and connects to the address it checked.
import { lookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { followingRedirects, type EgressFetch, type EgressRequest } from '../core/egress-fetch.ts';
import {
  egressByAddress,
  egressByName,
  egressRefusal,
  urlHostname,
  type EgressAllowList,
} from '../core/egress-policy.ts';

/** Response bodies are buffered up to this much ahead of the reader, so a slow reader holds the remote back. */
const BODY_HIGH_WATER_BYTES = 256 * 1024;
/** Statuses whose response has no body, whatever the remote sends. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function nodeEgressFetch(allow: EgressAllowList): EgressFetch {
  return followingRedirects(async (request) => send(request, await checkedAddress(request, allow)));
}

/**
 * The address to connect to, checked: undefined when the host needs no pinning (an address
 * literal, which Node connects to as it is, or a listed name, allowed whatever it resolves to).
 */
async function checkedAddress(request: EgressRequest, allow: EgressAllowList): Promise<LookupAddress | undefined> {
  const hostname = urlHostname(request.url);
  const byName = egressByName(hostname, allow);
  if (byName !== undefined) {
    if (!byName.allowed) throw egressRefusal(request.url, byName);
    return undefined;
  }
  const addresses = await resolve(hostname, request.signal);
  const verdict = egressByAddress(
    hostname,
    addresses.map((entry) => entry.address),
    allow,
  );
  if (!verdict.allowed) throw egressRefusal(request.url, verdict);
  return addresses[0];
}

/** Every address of the name, in the resolver's order; a name that does not resolve fails as fetch does (a TypeError). */
function resolve(hostname: string, signal: AbortSignal | undefined): Promise<LookupAddress[]> {
  return new Promise((done, fail) => {
    if (signal?.aborted) return fail(signal.reason);
    const onAbort = () => fail(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    lookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
      signal?.removeEventListener('abort', onAbort);
      if (error) fail(new TypeError('fetch failed', { cause: error }));
      else if (addresses.length === 0)
        fail(new TypeError('fetch failed', { cause: new Error(`${hostname} has no addresses`) }));
      else done(addresses);
    });
  });
}

/** Node asks this instead of the resolver, so the socket goes to the address that was checked and nowhere else. */
function pinnedLookup(address: LookupAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [address]);
    else callback(null, address.address, address.family);
  };
}

/** One request, no redirect followed; the Host header and TLS server name stay the URL's, so certificates verify as usual. */
function send(request: EgressRequest, pinned: LookupAddress | undefined): Promise<Response> {
  const { url, signal } = request;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const headers: Record<string, string> = Object.fromEntries(request.headers);
    if (request.body !== undefined) headers['content-length'] = String(request.body.byteLength);
    const outgoing = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
      hostname: urlHostname(url),
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      // A fresh connection each time: a pooled one may have been opened for another check.
      agent: false,
      ...(pinned ? { lookup: pinnedLookup(pinned) } : {}),
    });
    const onAbort = () => outgoing.destroy(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    outgoing.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    outgoing.once('response', (incoming) => {
      const abortBody = () => incoming.destroy(signal!.reason);
      signal?.removeEventListener('abort', onAbort);
      signal?.addEventListener('abort', abortBody, { once: true });
      incoming.once('close', () => signal?.removeEventListener('abort', abortBody));
      try {
        resolve(toResponse(incoming, request.method));
      } catch (error) {
        incoming.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    outgoing.end(request.body);
  });
}

function toResponse(incoming: IncomingMessage, method: string): Response {
  const status = incoming.statusCode ?? 0;
  const headers = new Headers();
  for (let index = 0; index + 1 < incoming.rawHeaders.length; index += 2)
    headers.append(incoming.rawHeaders[index]!, incoming.rawHeaders[index + 1]!);
  if (method === 'HEAD' || NULL_BODY.has(status)) {
    incoming.resume();
    return new Response(null, { status, statusText: incoming.statusMessage, headers });
  }
  return new Response(bodyStream(incoming), { status, statusText: incoming.statusMessage, headers });
}

/** The body as a web stream that reads from the socket only as fast as its reader takes it. */
function bodyStream(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        incoming.on('data', (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
        });
        incoming.once('end', () => {
          if (!settled) controller.close();
          settled = true;
        });
        incoming.once('error', (error) => {
          if (!settled) controller.error(error);
          settled = true;
        });
        incoming.once('close', () => {
          if (!settled) controller.error(new TypeError('terminated: the remote closed the connection mid-body'));
          settled = true;
        });
      },
      pull() {
        incoming.resume();
      },
      cancel() {
        settled = true;
        incoming.destroy();
      },
    },
    { highWaterMark: BODY_HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
  );
}

// The Cloudflare home's egress: a Worker has no DNS step of its own, so address literals and localhost names are checked, on every redirect hop.
import { followingRedirects, type EgressFetch } from '../core/egress-fetch.ts';
import { egressByName, egressRefusal, urlHostname, type EgressAllowList } from '../core/egress-policy.ts';

/**
 * A name that is not localhost goes to Cloudflare's fetch unresolved: Cloudflare resolves and
 * connects from its own network, which holds none of the operator's private addresses.
 */
export function workerEgressFetch(allow: EgressAllowList): EgressFetch {
  return followingRedirects(async (request) => {
    const verdict = egressByName(urlHostname(request.url), allow);
    if (verdict !== undefined && !verdict.allowed) throw egressRefusal(request.url, verdict);
    return fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
      redirect: 'manual',
    });
  });
}

// What the workerd tests share: requests to the Worker of test/workers/wrangler.toml, and the keys stored in its R2 bucket.
import { SELF } from 'cloudflare:test';
import { env } from 'cloudflare:workers';

/** The admin key the Worker's TOOLGATE_API_KEY makes. */
export const KEY = 'tg_workerd_test_admin_key_0123456789';
/** The runner key the Worker's TOOLGATE_RUNNER_KEY makes: admin keys do not serve the runner protocol. */
export const RUNNER_KEY = 'tg_workerd_test_runner_key_0123456789';

/** A request to the Worker (the runner's routes with the runner key, others with the admin key): its status and JSON body. */
export async function api(
  method: string,
  path: string,
  body?: unknown,
  key = path.startsWith('/v1/runner/') ? RUNNER_KEY : KEY,
): Promise<{ status: number; body: any }> {
  const response = await SELF.fetch(`https://toolgate.test${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Every key stored in the Worker's blob bucket under `prefix`. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.BLOBS.list({ prefix, ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return keys;
}

/** The prefix (`ws/<store>/`) of the store holding `content`, found by its SHA-256 among the stored keys. */
export async function storeHolding(content: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(content));
  const hash = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  const keys = (await keysUnder('ws/')).filter((key) => key.endsWith(`/blobs/${hash.slice(0, 2)}/${hash}`));
  if (keys.length !== 1) throw new Error(`${keys.length} stores hold that content`);
  return keys[0]!.split('/').slice(0, 2).join('/') + '/';
}

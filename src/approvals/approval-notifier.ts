// Signed notices to a key's notify URL when one of its calls waits for approval.
import { isToolError } from '../core/errors.ts';

export interface ApprovalNotice {
  url: string;
  /** The key's notify secret: the HMAC-SHA256 key of the signature. */
  secret: string;
  /** The JSON body, as sent (the signature covers these exact bytes). */
  body: string;
  deliveryId: string;
}

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

const ATTEMPTS = 3;
const TIMEOUT_MS = 5_000;

/**
 * Delivers a notice: `X-Toolgate-Signature-256: sha256=<hex HMAC of timestamp + "." + body>`,
 * with the timestamp in `X-Toolgate-Timestamp`, so a receiver can refuse replays. A few retries
 * with backoff; a notice that still fails is reported to `onFailure` and never affects the call.
 * A URL the egress rule refuses is reported at once: asking again would be refused again.
 */
export async function deliverNotice(
  notice: ApprovalNotice,
  options: { fetch?: FetchLike; onFailure?: (message: string) => void } = {},
): Promise<boolean> {
  const send = options.fetch ?? ((url, init) => fetch(url, init));
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    const timestamp = String(Math.floor(Date.now() / 1000));
    try {
      const response = await send(notice.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-toolgate-event': 'approval.created',
          'x-toolgate-delivery': notice.deliveryId,
          'x-toolgate-timestamp': timestamp,
          'x-toolgate-signature-256': `sha256=${await hmacSha256Hex(notice.secret, `${timestamp}.${notice.body}`)}`,
        },
        body: notice.body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
        redirect: 'manual',
      });
      await response.body?.cancel();
      if (response.ok) return true;
      if (response.status < 500 && response.status !== 429) break;
    } catch (error) {
      if (isToolError(error) && error.code === 'forbidden') {
        options.onFailure?.(`the approval notice ${notice.deliveryId} was not sent: ${error.message}`);
        return false;
      }
      // Retried below.
    }
    if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, 250 * 4 ** (attempt - 1)));
  }
  options.onFailure?.(`the approval notice ${notice.deliveryId} could not be delivered to the key's notify URL`);
  return false;
}

export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(message)));
  return Array.from(signature, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

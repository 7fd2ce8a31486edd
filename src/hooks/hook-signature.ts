// Webhook signatures: HMAC-SHA256 of a delivery's raw bytes (WebCrypto), compared in constant time.
import { TIMESTAMP_HEADER, TIMESTAMP_WINDOW_SECONDS } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';

/** GitHub's header and ours; both carry `sha256=<hex>`, and each one present must verify. */
export const SIGNATURE_HEADERS = ['x-hub-signature-256', 'x-toolgate-signature-256'] as const;

const encoder = new TextEncoder();
/** Signed in place of a hook that does not exist, so an unknown id costs the same time as a wrong signature. */
const ABSENT_SECRET = 'toolgate: no hook has this id';

/** A delivery as its signature sees it: the raw body and the request's headers. */
export interface SignedRequest {
  body: Uint8Array;
  headers: { get(name: string): string | null };
}

/**
 * What a sender signs: the raw body (GitHub's way), or, with a timestamp header, the timestamp's
 * ASCII digits, a `.`, then the raw body (as toolgate signs its own approval notices).
 */
export function signedBytes(body: Uint8Array, timestamp: string | undefined): Uint8Array {
  if (timestamp === undefined) return body;
  const prefix = encoder.encode(`${timestamp}.`);
  const bytes = new Uint8Array(prefix.byteLength + body.byteLength);
  bytes.set(prefix, 0);
  bytes.set(body, prefix.byteLength);
  return bytes;
}

export async function hmacSha256(secret: string, bytes: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, bytes));
}

/** The header value for a MAC: `sha256=` and 64 lowercase hex digits. */
export function signatureValue(mac: Uint8Array): string {
  let hex = '';
  for (const byte of mac) hex += byte.toString(16).padStart(2, '0');
  return `sha256=${hex}`;
}

export interface SignaturePolicy {
  /** A delivery without a timestamp header is refused, even when its signature verifies. */
  requireTimestamp?: boolean;
}

/**
 * Throws `unauthorized` unless the request carries a signature header, every signature header
 * present verifies with `secret`, and a timestamp header, when present (or required), is within
 * 300 s of now. `secret` is undefined for an unknown hook: that fails exactly as a wrong
 * signature does.
 */
export async function verifySignature(
  secret: string | undefined,
  request: SignedRequest,
  nowMs: number,
  policy: SignaturePolicy = {},
): Promise<void> {
  const presented = SIGNATURE_HEADERS.flatMap((name) => {
    const value = request.headers.get(name);
    return value === null ? [] : [{ name, value }];
  });
  if (presented.length === 0) {
    throw new ToolError(
      'unauthorized',
      'The delivery is not signed; send X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the hook secret>.',
    );
  }
  const macs = presented.map(({ name, value }) => {
    const mac = parseSignature(value);
    if (!mac)
      throw new ToolError('unauthorized', `The ${name} header must be sha256= followed by 64 lowercase hex digits.`, {
        header: name,
      });
    return mac;
  });
  const timestamp = readTimestamp(request.headers.get(TIMESTAMP_HEADER), nowMs);
  const expected = await hmacSha256(secret ?? ABSENT_SECRET, signedBytes(request.body, timestamp));
  // Every MAC is compared, whatever the first gave, so the time taken says nothing about which failed.
  let valid = secret !== undefined;
  for (const mac of macs) valid = constantTimeEqual(mac, expected) && valid;
  if (!valid) {
    throw new ToolError(
      'unauthorized',
      "The delivery's signature does not verify for this hook; sign the exact raw body with the hook's secret.",
    );
  }
  // Checked once the signature verified, so only a sender holding the secret learns the hook wants a timestamp.
  if (policy.requireTimestamp && timestamp === undefined) {
    throw new ToolError(
      'unauthorized',
      'This hook requires X-Toolgate-Timestamp: send the current time in seconds since the epoch and sign "<timestamp>.<raw body>".',
      {
        header: TIMESTAMP_HEADER,
      },
    );
  }
}

/** True when both hold the same bytes; the time taken depends on the length only. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i += 1) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/** `sha256=` and exactly 64 lowercase hex digits, as GitHub sends it; anything else is no signature. */
function parseSignature(value: string): Uint8Array | undefined {
  const match = /^sha256=([0-9a-f]{64})$/.exec(value);
  if (!match) return undefined;
  const mac = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) mac[i] = parseInt(match[1]!.slice(2 * i, 2 * i + 2), 16);
  return mac;
}

function readTimestamp(value: string | null, nowMs: number): string | undefined {
  if (value === null) return undefined;
  if (!/^\d{1,12}$/.test(value)) {
    throw new ToolError('unauthorized', `${TIMESTAMP_HEADER} must be whole seconds since the epoch.`, {
      header: TIMESTAMP_HEADER,
    });
  }
  const skew = Math.abs(nowMs / 1000 - Number(value));
  if (skew > TIMESTAMP_WINDOW_SECONDS) {
    throw new ToolError(
      'unauthorized',
      `The delivery's timestamp is ${Math.round(skew)} s from the server's clock, more than ${TIMESTAMP_WINDOW_SECONDS} s; sign it again with the current time.`,
      {
        header: TIMESTAMP_HEADER,
      },
    );
  }
  return value;
}

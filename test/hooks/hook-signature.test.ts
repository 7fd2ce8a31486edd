// Webhook signatures: GitHub's published example verifies, and no single-byte change of the body
// or of the signature does, with either header, with or without a signed timestamp.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isToolError } from '../../src/core/errors.ts';
import {
  hmacSha256,
  signatureValue,
  signedBytes,
  verifySignature,
  type SignaturePolicy,
} from '../../src/hooks/hook-signature.ts';

// GitHub docs, "Validating webhook deliveries".
const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_PAYLOAD = 'Hello, World!';
const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

const encoder = new TextEncoder();
const NOW = Date.UTC(2025, 0, 1);

function request(body: Uint8Array, headers: Record<string, string>) {
  return { body, headers: new Headers(headers) };
}

/** The code a verification fails with, or 'ok'. */
async function outcome(
  secret: string | undefined,
  body: Uint8Array,
  headers: Record<string, string>,
  now = NOW,
  policy: SignaturePolicy = {},
): Promise<string> {
  try {
    await verifySignature(secret, request(body, headers), now, policy);
    return 'ok';
  } catch (error) {
    if (!isToolError(error)) throw error;
    return error.code;
  }
}

describe('verifySignature', () => {
  it("verifies GitHub's published X-Hub-Signature-256 example, and ours in the same format", async () => {
    const body = encoder.encode(GITHUB_PAYLOAD);
    expect(signatureValue(await hmacSha256(GITHUB_SECRET, body))).toBe(GITHUB_SIGNATURE);
    expect(await outcome(GITHUB_SECRET, body, { 'X-Hub-Signature-256': GITHUB_SIGNATURE })).toBe('ok');
    expect(await outcome(GITHUB_SECRET, body, { 'X-Toolgate-Signature-256': GITHUB_SIGNATURE })).toBe('ok');
    expect(
      await outcome(GITHUB_SECRET, body, {
        'X-Hub-Signature-256': GITHUB_SIGNATURE,
        'X-Toolgate-Signature-256': GITHUB_SIGNATURE,
      }),
    ).toBe('ok');
  });

  it('refuses a missing signature, another secret, an unknown hook, a malformed value and a second header that does not verify', async () => {
    const body = encoder.encode(GITHUB_PAYLOAD);
    expect(await outcome(GITHUB_SECRET, body, {})).toBe('unauthorized');
    expect(await outcome('another secret entirely', body, { 'X-Hub-Signature-256': GITHUB_SIGNATURE })).toBe(
      'unauthorized',
    );
    expect(await outcome(undefined, body, { 'X-Hub-Signature-256': GITHUB_SIGNATURE })).toBe('unauthorized');
    for (const value of [
      GITHUB_SIGNATURE.toUpperCase(),
      GITHUB_SIGNATURE.replace('sha256=', 'sha1='),
      GITHUB_SIGNATURE.slice(0, -2),
      `${GITHUB_SIGNATURE}00`,
    ]) {
      expect(await outcome(GITHUB_SECRET, body, { 'X-Hub-Signature-256': value })).toBe('unauthorized');
    }
    const wrong = `sha256=${'0'.repeat(64)}`;
    expect(
      await outcome(GITHUB_SECRET, body, {
        'X-Hub-Signature-256': GITHUB_SIGNATURE,
        'X-Toolgate-Signature-256': wrong,
      }),
    ).toBe('unauthorized');
  });

  it('answers an unknown hook with the message of a wrong signature', async () => {
    const body = encoder.encode(GITHUB_PAYLOAD);
    const message = async (secret: string | undefined) =>
      verifySignature(secret, request(body, { 'X-Hub-Signature-256': GITHUB_SIGNATURE }), NOW).then(
        () => 'ok',
        (error: Error) => error.message,
      );
    expect(await message(undefined)).toBe(await message('another secret entirely'));
  });

  it('with a timestamp, signs "<timestamp>.<body>" and takes it only within 300 s of now', async () => {
    const secret = 'a hook secret of some length';
    const body = encoder.encode('{"patch":"x"}');
    const at = (seconds: number) => String(Math.floor(NOW / 1000) + seconds);
    const signed = async (timestamp: string) => signatureValue(await hmacSha256(secret, signedBytes(body, timestamp)));
    for (const skew of [0, -300, 300]) {
      expect(
        await outcome(secret, body, {
          'X-Toolgate-Timestamp': at(skew),
          'X-Toolgate-Signature-256': await signed(at(skew)),
        }),
      ).toBe('ok');
    }
    for (const skew of [-302, 302, -86_400]) {
      expect(
        await outcome(secret, body, {
          'X-Toolgate-Timestamp': at(skew),
          'X-Toolgate-Signature-256': await signed(at(skew)),
        }),
      ).toBe('unauthorized');
    }
    // The timestamp is signed: a fresh one on a captured delivery does not verify, nor the body alone.
    expect(
      await outcome(secret, body, { 'X-Toolgate-Timestamp': at(1), 'X-Toolgate-Signature-256': await signed(at(0)) }),
    ).toBe('unauthorized');
    const bodyOnly = signatureValue(await hmacSha256(secret, body));
    expect(await outcome(secret, body, { 'X-Toolgate-Timestamp': at(0), 'X-Toolgate-Signature-256': bodyOnly })).toBe(
      'unauthorized',
    );
    for (const value of ['', 'now', '1.5', '-1', '1234567890123']) {
      expect(
        await outcome(secret, body, { 'X-Toolgate-Timestamp': value, 'X-Toolgate-Signature-256': await signed(value) }),
      ).toBe('unauthorized');
    }
  });

  it('with requireTimestamp, refuses a delivery without a timestamp even when it verifies, and says so only once it verifies', async () => {
    const secret = 'a hook secret of some length';
    const body = encoder.encode('{"patch":"x"}');
    const at = String(Math.floor(NOW / 1000));
    const required = { requireTimestamp: true };
    const bodyOnly = signatureValue(await hmacSha256(secret, body));
    const timed = signatureValue(await hmacSha256(secret, signedBytes(body, at)));
    expect(await outcome(secret, body, { 'X-Hub-Signature-256': bodyOnly })).toBe('ok');
    expect(await outcome(secret, body, { 'X-Hub-Signature-256': bodyOnly }, NOW, required)).toBe('unauthorized');
    expect(
      await outcome(secret, body, { 'X-Toolgate-Timestamp': at, 'X-Hub-Signature-256': timed }, NOW, required),
    ).toBe('ok');
    // Outside the window, or the captured timestamped signature without its timestamp.
    expect(
      await outcome(
        secret,
        body,
        { 'X-Toolgate-Timestamp': at, 'X-Hub-Signature-256': timed },
        NOW + 301_000,
        required,
      ),
    ).toBe('unauthorized');
    expect(await outcome(secret, body, { 'X-Hub-Signature-256': timed }, NOW, required)).toBe('unauthorized');
    const message = (secretUsed: string | undefined, signature: string) =>
      verifySignature(secretUsed, request(body, { 'X-Hub-Signature-256': signature }), NOW, required).then(
        () => 'ok',
        (error: Error) => error.message,
      );
    expect(await message(secret, bodyOnly)).toMatch(/requires x-toolgate-timestamp/i);
    // Without the secret, the answer is that of a wrong signature, as for an unknown hook.
    expect(await message(secret, `sha256=${'0'.repeat(64)}`)).toBe(await message(undefined, bodyOnly));
  });

  it('refuses all of 10,000 random single-byte changes of the body or of the signature', async () => {
    const body = encoder.encode(GITHUB_PAYLOAD);
    const signature = encoder.encode(GITHUB_SIGNATURE);
    const mutation = fc.record({
      target: fc.constantFrom('body', 'signature'),
      position: fc.nat(),
      // A byte other than the one it replaces: 1..255 added modulo 256.
      delta: fc.integer({ min: 1, max: 255 }),
      header: fc.constantFrom('X-Hub-Signature-256', 'X-Toolgate-Signature-256'),
    });
    let runs = 0;
    let unsendable = 0;
    await fc.assert(
      fc.asyncProperty(mutation, async ({ target, position, delta, header }) => {
        runs += 1;
        const bytes = (target === 'body' ? body : signature).slice();
        const index = position % bytes.byteLength;
        bytes[index] = (bytes[index]! + delta) % 256;
        const sentBody = target === 'body' ? bytes : body;
        // A header value is Latin-1 text; a byte that is not a valid header character is refused by Headers itself.
        const value = target === 'signature' ? String.fromCharCode(...bytes) : GITHUB_SIGNATURE;
        let headers: Record<string, string>;
        try {
          new Headers({ [header]: value });
          headers = { [header]: value };
        } catch {
          unsendable += 1;
          return;
        }
        expect(await outcome(GITHUB_SECRET, sentBody, headers)).toBe('unauthorized');
      }),
      { numRuns: 10_000, seed: 8 },
    );
    expect(runs).toBe(10_000);
    // Control characters cannot be sent in a header at all; the rest all reached the check.
    expect(unsendable).toBeLessThan(1_000);
  });
});

// Rate limit and quota taken in one step, for homes that keep both apart from the call's own database.
import type { ApiKey } from '../keys/key-store.ts';

/**
 * Takes one call from a key's rate limit and admits it against the key's quota ledger at once:
 * where both live in one remote place (the Cloudflare home's key object), a call costs one
 * request there instead of two. Throws `rate_limited` (nothing taken from the quota),
 * `quota_exceeded`, or `unauthorized` when the key is no longer live.
 */
export interface CallAdmission {
  admitCall(key: ApiKey, options: { perMinute: number; quota: boolean; usesProcessTime: boolean }): Promise<void>;
}

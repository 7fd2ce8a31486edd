// A quota kept apart from the usage records, for homes whose records are spread over several databases.
import type { ApiKey } from '../keys/key-store.ts';

/**
 * Admits calls one at a time for all of a key's workspaces (one database each). Without one,
 * the meter checks the quota against its own records in the transaction that opens the call's.
 */
export interface QuotaLedger {
  /** Counts one admitted call against the key's quota, or throws `quota_exceeded`. */
  admit(key: ApiKey, options: { usesProcessTime: boolean }): Promise<void>;
  /** Adds process seconds of one of the key's calls (started at `startedAt`) as they are counted. */
  addProcessSeconds(keyId: string, startedAt: number, seconds: number): Promise<void>;
  /** Whether the key's processSeconds quota is spent. */
  processSecondsSpent(key: ApiKey): Promise<boolean>;
}

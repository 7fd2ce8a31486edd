// A key's quota ledger in its key object's SQLite: calls admitted one at a time (so a quota of N
// admits exactly N across workspaces), and process seconds added as workspace objects count them.
import { checkQuota, periodStart } from '../metering/quota-rules.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';

/**
 * The quota of keys whose calls are recorded in many workspace objects: calls are admitted here
 * one at a time (so a quota of N admits exactly N), and process seconds are added as the
 * workspace objects learn them.
 */
export class QuotaLedgerTable {
  constructor(private readonly db: SqlDatabase) {
    db.script(`
      CREATE TABLE IF NOT EXISTS quota_calls (key_id TEXT NOT NULL, period_start INTEGER NOT NULL, calls INTEGER NOT NULL, PRIMARY KEY (key_id, period_start));
      CREATE TABLE IF NOT EXISTS quota_seconds (key_id TEXT NOT NULL, started_at INTEGER NOT NULL, seconds REAL NOT NULL);
      CREATE INDEX IF NOT EXISTS quota_seconds_key_time ON quota_seconds (key_id, started_at);
    `);
  }

  admit(key: ApiKey, usesProcessTime: boolean): void {
    if (!key.quota) return;
    const now = Date.now();
    const since = periodStart(key.quota.period, now);
    this.db.transaction(() => {
      const [calls] = this.db.query<{ calls: number }>(
        'SELECT calls FROM quota_calls WHERE key_id = ? AND period_start = ?',
        key.id,
        since,
      );
      const [seconds] = this.db.query<{ seconds: number | null }>(
        'SELECT SUM(seconds) AS seconds FROM quota_seconds WHERE key_id = ? AND started_at >= ?',
        key.id,
        since,
      );
      checkQuota(key.quota!, { calls: calls?.calls ?? 0, seconds: seconds?.seconds ?? 0 }, usesProcessTime, now);
      this.db.query(
        'INSERT INTO quota_calls (key_id, period_start, calls) VALUES (?, ?, 1) ON CONFLICT (key_id, period_start) DO UPDATE SET calls = calls + 1',
        key.id,
        since,
      );
    });
  }

  /** Whether the key's processSeconds quota is spent in its current period. */
  processSecondsSpent(key: ApiKey): boolean {
    if (key.quota?.processSeconds === undefined) return false;
    const since = periodStart(key.quota.period, Date.now());
    const [row] = this.db.query<{ seconds: number | null }>(
      'SELECT SUM(seconds) AS seconds FROM quota_seconds WHERE key_id = ? AND started_at >= ?',
      key.id,
      since,
    );
    return (row?.seconds ?? 0) >= key.quota.processSeconds;
  }

  addSeconds(keyId: string, startedAt: number, seconds: number): void {
    this.db.query(
      'INSERT INTO quota_seconds (key_id, started_at, seconds) VALUES (?, ?, ?)',
      keyId,
      startedAt,
      seconds,
    );
  }
}

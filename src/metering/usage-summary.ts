// The totals of usage records per tool, workspace or key, over a time range, a key and a scope (GET /v1/usage).
import type { UsageRow } from '../contract/http-answers.ts';
import type { UsageQuery } from '../contract/object-calls.ts';
import { scopeFilter } from '../core/workspace-scope.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';

/** Totals per group of the calls recorded in `db` that `query` selects; the caller commits waiting records first. */
export function usageSummary(db: SqlDatabase, query: UsageQuery): UsageRow[] {
  const group = { tool: "tool || COALESCE(':' || action, '')", workspace: 'workspace', key: 'key_id' }[query.groupBy];
  const scope = query.workspaces === undefined ? undefined : scopeFilter(query.workspaces);
  const conditions = ['started_at >= ?', 'started_at < ?'];
  const params: (string | number)[] = [query.from, query.to];
  if (query.keyId !== undefined) {
    conditions.push('key_id = ?');
    params.push(query.keyId);
  }
  if (scope !== undefined) {
    conditions.push('workspace IN (SELECT value FROM json_each(?))');
    params.push(scope);
  }
  const rows = db.query<{
    grp: string;
    calls: number;
    errors: number;
    bytes_in: number;
    bytes_out: number;
    process_seconds: number;
  }>(
    `SELECT ${group} AS grp, COUNT(*) AS calls,
            SUM(CASE WHEN outcome IS NOT NULL AND outcome <> 'ok' THEN 1 ELSE 0 END) AS errors,
            SUM(bytes_in) AS bytes_in, SUM(bytes_out) AS bytes_out, SUM(process_seconds) AS process_seconds
     FROM usage WHERE ${conditions.join(' AND ')}
     GROUP BY grp ORDER BY grp`,
    ...params,
  );
  return rows.map((row) => ({
    group: row.grp,
    calls: row.calls,
    errors: row.errors,
    bytesIn: row.bytes_in,
    bytesOut: row.bytes_out,
    processSeconds: Math.round(row.process_seconds * 1000) / 1000,
  }));
}

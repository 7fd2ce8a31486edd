// Usage: totals of the calling key's tool calls (an admin's: every call on the workspaces in its scope), grouped by tool, workspace or key.
import { Hono } from 'hono';
import { usageGroups } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';
import type { UsageGroup, UsageQuery, UsageRow } from '../metering/usage-meter.ts';
import type { AppEnv } from './app-deps.ts';

/** Where usage totals come from: the meter, or a home's sum over the meters of several objects. */
export interface UsageSource {
  summary(query: UsageQuery): UsageRow[] | Promise<UsageRow[]>;
}

export function usageRoutes(deps: { usage: UsageSource }): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  routes.get('/usage', async (c) => {
    const key = c.get('key');
    const groupBy = c.req.query('groupBy') ?? 'tool';
    if (!(usageGroups as readonly string[]).includes(groupBy))
      throw new ToolError('invalid_argument', `groupBy must be one of ${usageGroups.join(', ')}.`, { groupBy });
    const from = parseTime(c.req.query('from'), 'from') ?? 0;
    const to = parseTime(c.req.query('to'), 'to') ?? Number.MAX_SAFE_INTEGER;
    if (from > to)
      throw new ToolError('invalid_argument', 'from must not be after to.', {
        from: c.req.query('from'),
        to: c.req.query('to'),
      });
    const keyFilter = c.req.query('keyId');
    if (keyFilter !== undefined && key.role !== 'admin' && keyFilter !== key.id) {
      throw new ToolError('forbidden', "Only an admin key may read another key's usage.", { keyId: keyFilter });
    }
    const keyId = key.role === 'admin' ? keyFilter : key.id;
    // Calls on workspaces outside the key's scope are never counted, whoever made them.
    const rows = await deps.usage.summary({
      from,
      to,
      groupBy: groupBy as UsageGroup,
      keyId,
      workspaces: key.workspaces,
    });
    return c.json({
      from: new Date(from).toISOString(),
      to: to === Number.MAX_SAFE_INTEGER ? null : new Date(to).toISOString(),
      rows,
    });
  });

  return routes;
}

/** An ISO 8601 time or milliseconds since the epoch. */
function parseTime(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const at = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(at) || at > 8.64e15)
    throw new ToolError('invalid_argument', `${name} must be an ISO 8601 time or milliseconds since the epoch.`, {
      [name]: value,
    });
  return at;
}

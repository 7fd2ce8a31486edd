// Approval routes: list and read approvals, follow them as they change (a Server-Sent Events stream), and decide one (approver or admin keys).
import { Hono } from 'hono';
import { approvalStatuses, decisionInput } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';
import { publicApproval, type Approval } from '../approvals/approval-store.ts';
import type { ApiKey } from '../keys/key-store.ts';
import { parseInput } from '../contract/parse-input.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { readJsonBody } from './json-body.ts';
import { assertRole } from './route-access.ts';
import { eventFrame, eventStreamResponse, KEEP_ALIVE_FRAME, KEEP_ALIVE_MS, revoked } from './event-stream.ts';
import { Doorbell } from '../core/doorbell.ts';
import { consoleLog } from '../core/log.ts';

/** Approvals a stream holds for a client that reads slower than they change; past it the stream ends, and the client lists and reconnects. */
const MAX_QUEUED_APPROVALS = 1_000;

/** Where approvals are listed, read and decided: the tool calls, or a home's way of reaching them. */
export interface ApprovalDesk {
  listApprovals(key: ApiKey, status: Approval['status'] | undefined, limit: number): Approval[] | Promise<Approval[]>;
  getApproval(key: ApiKey, id: string): Approval | Promise<Approval>;
  decide(key: ApiKey, id: string, decision: 'approve' | 'reject', reason: string | undefined): Promise<Approval>;
  /** Calls `listener` with each approval `key` may see as it is created and changes; answers how to stop. */
  watchApprovals(key: ApiKey, listener: (approval: Approval) => void): () => void;
  /** Whether `key` is still live: a stream asks again every keep-alive interval and ends once it is revoked. */
  keyLive(key: ApiKey): boolean | Promise<boolean>;
  /** Readies `key`'s stream before it answers (a home whose approvals are elsewhere asks to hear of them). */
  prepareWatch?(key: ApiKey): Promise<void>;
}

export function approvalRoutes(
  deps: Pick<AppDeps, 'limits'> & { approvals: ApprovalDesk; keepAliveMs?: number },
): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();

  // Before /approvals/:id, which would otherwise take "stream" for an id.
  routes.get('/approvals/stream', async (c) => {
    const key = c.get('key');
    await deps.approvals.prepareWatch?.(key);
    const keepAliveMs = deps.keepAliveMs ?? KEEP_ALIVE_MS;
    return eventStreamResponse(
      (signal) =>
        approvalEvents(
          {
            watch: (listener) => deps.approvals.watchApprovals(key, listener),
            keyLive: async () => deps.approvals.keyLive(key),
            keepAliveMs,
          },
          signal,
        ),
      { endSignals: [c.req.raw.signal], log: consoleLog },
    );
  });

  routes.get('/approvals', async (c) => {
    const key = c.get('key');
    const status = c.req.query('status');
    if (status !== undefined && !(approvalStatuses as readonly string[]).includes(status)) {
      throw new ToolError('invalid_argument', `status must be one of ${approvalStatuses.join(', ')}.`, { status });
    }
    const limit = parseLimit(c.req.query('limit'));
    const approvals = await deps.approvals.listApprovals(
      key,
      status as (typeof approvalStatuses)[number] | undefined,
      limit,
    );
    return c.json({ approvals: approvals.map(publicApproval) });
  });

  routes.get('/approvals/:id', async (c) => {
    const key = c.get('key');
    return c.json(publicApproval(await deps.approvals.getApproval(key, c.req.param('id'))));
  });

  routes.post('/approvals/:id/decision', async (c) => {
    const key = c.get('key');
    assertRole(key, ['approver', 'admin'], 'Deciding approvals');
    const body = parseInput(decisionInput, await readJsonBody(c.req.raw, deps.limits.maxBodyBytes), 'decision');
    const approval = await deps.approvals.decide(key, c.req.param('id'), body.decision, body.reason);
    return c.json(publicApproval(approval));
  });

  return routes;
}

/** The frames of the approvals stream: an `approval` event for each creation and change the key may see. */
async function* approvalEvents(
  follow: {
    watch: (listener: (approval: Approval) => void) => () => void;
    keyLive: () => Promise<boolean>;
    keepAliveMs: number;
  },
  signal: AbortSignal,
): AsyncGenerator<string, void, undefined> {
  const queue: Approval[] = [];
  const bell = new Doorbell();
  let keyCheckedAt = Date.now();
  const stopWatching = follow.watch((approval) => {
    queue.push(approval);
    bell.ring();
  });
  try {
    while (!signal.aborted) {
      if (Date.now() - keyCheckedAt >= follow.keepAliveMs) {
        keyCheckedAt = Date.now();
        if (!(await follow.keyLive())) throw revoked();
      }
      if (queue.length > MAX_QUEUED_APPROVALS)
        throw new ToolError(
          'unavailable',
          'This stream fell too far behind the approvals; list them with GET /v1/approvals and open the stream again.',
        );
      const next = queue.shift();
      if (next) {
        yield eventFrame('approval', publicApproval(next));
        continue;
      }
      bell.clear();
      if (queue.length > 0) continue;
      const woke = await bell.wait(follow.keepAliveMs, signal);
      if (woke === 'idle') yield KEEP_ALIVE_FRAME;
    }
  } finally {
    stopWatching();
  }
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 100;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > 1000)
    throw new ToolError('invalid_argument', 'limit must be a whole number from 1 to 1000.', { limit: value });
  return limit;
}

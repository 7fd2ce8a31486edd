// The Cloudflare home's dispatcher: one Durable Object that takes job ids from the Queue and
// hands them to runners that lease. It only offers: the workspace object that holds a job
// leases it (or answers that it no longer waits), so a job delivered twice runs once.
import type { Hono } from 'hono';
import { scopeFilter, type WorkspaceScope } from '../core/workspace-scope.ts';
import { createBaseApp, type AppEnv } from '../http/app.ts';
import { readJsonBody } from '../http/json-body.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import { leaseInput } from '../http/runner-routes.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { LeaseHolder } from '../processes/runner-reports.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { builtinTools } from '../tools/index.ts';
import { parseInput, ToolRegistry } from '../tools/registry.ts';
import { callObject, directoryObject, INTERNAL_PREFIX, internalOnly, readSettings, workspaceObject, type DurableObjectState, type Env, type JobMessage } from './bindings.ts';

export class DispatcherObject {
  private readonly app: Hono<AppEnv>;
  private readonly offers: JobOffers;
  /** Offers a lease is asking about right now: two runners are never sent to the same job at once. */
  private readonly claimed = new Set<string>();
  private readonly waiting = new Set<() => void>();

  constructor(state: DurableObjectState, env: Env) {
    const settings = readSettings(env);
    this.offers = new JobOffers(new DurableObjectSqlDatabase(state.storage));
    const keys = { authenticate: async (secret: string) => callObject<ApiKey>(directoryObject(env), 'authenticate', { secret }) };
    const app = createBaseApp({ keys, tools: new ToolRegistry(builtinTools), runnerProtocol: true });
    app.post('/v1/runner/lease', async (c) => {
      const key = c.get('key');
      const input = parseInput(leaseInput, await readJsonBody(c.req.raw, settings.maxBodyBytes), 'runner report');
      const job = await this.lease(env, input.runnerId, { keyId: key.id, workspaces: key.workspaces }, input.waitMs ?? 0, c.req.raw.signal);
      return job ? c.json({ job }) : c.body(null, 204);
    });
    app.post(`${INTERNAL_PREFIX}offer`, internalOnly(), async (c) => {
      const message = (await readJsonBody(c.req.raw, settings.maxBodyBytes)) as JobMessage;
      this.offers.add(message);
      for (const wake of [...this.waiting]) wake();
      return c.body(null, 204);
    });
    assertRoutesGuarded(app);
    this.app = app;
  }

  fetch(request: Request): Promise<Response> {
    return Promise.resolve(this.app.fetch(request));
  }

  /**
   * Asks the workspace object of each offer in the runner key's scope, oldest first, to lease its
   * job to the runner; an offer whose job no longer waits (leased, stopped, its workspace deleted)
   * is dropped. With no offer left, waits up to `waitMs` for one to arrive.
   */
  private async lease(env: Env, runnerId: string, holder: LeaseHolder, waitMs: number, signal: AbortSignal): Promise<unknown> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      for (const offer of this.offers.oldest(this.claimed, holder.workspaces)) {
        // Another lease may have taken it while this one waited on a workspace object.
        if (this.claimed.has(offer.jobId)) continue;
        this.claimed.add(offer.jobId);
        try {
          const answer = await callObject<{ job: unknown }>(workspaceObject(env, offer.workspace), 'lease-job', { jobId: offer.jobId, runnerId, holder });
          this.offers.remove(offer.jobId);
          if (answer) return answer.job;
        } finally {
          this.claimed.delete(offer.jobId);
        }
      }
      const left = deadline - Date.now();
      if (left <= 0 || signal.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiting.add(wake);
      });
    }
  }
}

/** Job ids the Queue delivered and no runner has been sent to yet; one row per job however often it came. */
class JobOffers {
  constructor(private readonly db: SqlDatabase) {
    db.script('CREATE TABLE IF NOT EXISTS job_offers (job_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, seq INTEGER NOT NULL)');
  }

  add(message: JobMessage): void {
    this.db.query(
      'INSERT INTO job_offers (job_id, workspace, seq) VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_offers)) ON CONFLICT (job_id) DO NOTHING',
      message.jobId,
      message.workspace,
    );
  }

  /** A few of the oldest offers of workspaces in `scope` not being asked about already. */
  oldest(claimed: ReadonlySet<string>, scope: WorkspaceScope): JobMessage[] {
    const filter = scopeFilter(scope);
    return this.db
      .query<{ job_id: string; workspace: string }>(
        `SELECT job_id, workspace FROM job_offers ${filter === undefined ? '' : 'WHERE workspace IN (SELECT value FROM json_each(?))'} ORDER BY seq LIMIT ?`,
        ...(filter === undefined ? [] : [filter]),
        claimed.size + 16,
      )
      .filter((row) => !claimed.has(row.job_id))
      .map((row) => ({ jobId: row.job_id, workspace: row.workspace }));
  }

  remove(jobId: string): void {
    this.db.query('DELETE FROM job_offers WHERE job_id = ?', jobId);
  }
}

// The Cloudflare home's dispatcher shards: Durable Objects that take job ids from the Queue and
// hand them to the runners that lease from them. A shard only offers: the workspace object that
// holds a job leases it (or answers that it no longer waits), so a job delivered twice, or
// offered by several shards, runs once.
import type { Hono } from 'hono';
import { dispatcherCalls, workspaceCalls } from '../contract/object-calls.ts';
import { parseInput } from '../contract/parse-input.ts';
import { leaseRequestSchema } from '../contract/runner-protocol.ts';
import { scopeCovers, scopeFilter, type WorkspaceScope } from '../core/workspace-scope.ts';
import { consoleLog } from '../core/log.ts';
import type { AppEnv } from '../http/app-deps.ts';
import { createBaseApp } from '../http/app.ts';
import { readJsonBody } from '../http/json-body.ts';
import { assertRoutesGuarded } from '../http/route-access.ts';
import type { LeaseHolder } from '../processes/runner-reports.ts';
import type { LeaseWish } from '../processes/runner-side.ts';
import { DurableObjectSqlDatabase } from '../storage/durable-object-sql-database.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { builtinTools } from '../tools/index.ts';
import { ToolRegistry } from '../tools/registry.ts';
import {
  answerCall,
  callObject,
  DISPATCHER_SHARD_HEADER,
  dispatcherWatcher,
  INTERNAL_PREFIX,
  internalOnly,
  readCallBody,
  readSettings,
  workspaceObject,
  type DurableObjectState,
  type Env,
  type JobMessage,
} from './bindings.ts';
import { KeyClient } from './key-client.ts';
import { objectRequestCounter } from './object-requests.ts';

/** How soon a lease looks again at offers another lease was asking about (which it may leave to others). */
const CLAIM_RECHECK_MS = 50;
/** How long an offer waits for a runner waiting here to take it before the next shard is offered it too. */
const OFFER_CLAIM_MS = 1_000;
/**
 * How often a shard asks whether the offers it has held since its last look still wait: a job
 * offered to every shard and leased from one leaves copies in shards no runner leases from.
 */
const OFFER_CHECK_MS = 60_000;
/** Offers looked at in one check; the rest wait for the next. */
const OFFER_CHECK_BATCH = 500;

export class DispatcherObject {
  private readonly app: Hono<AppEnv>;
  private readonly offers: JobOffers;
  /** Offers a lease is asking about right now: two runners are never sent to the same job at once. */
  private readonly claimed = new Set<string>();
  /** Lease requests waiting for an offer, with whether each takes exec jobs only and whose runner key it is. */
  private readonly waiting = new Map<() => void, { execOnly: boolean; scope: WorkspaceScope }>();
  /** Offers waiting to hear that a runner waiting here dealt with them, by job id. */
  private readonly claims = new Map<string, () => void>();
  /** When each workspace's job was last handed out (a rising turn number): runners take workspaces in turn. */
  private readonly served = new Map<string, number>();
  private turn = 0;
  private readonly countRequest: () => void;
  private readonly keys: KeyClient;
  /** The newest offer when this shard last looked: offers up to it are asked about at the next look. */
  private checkedUpTo = 0;
  /** This shard's number, as the Worker names it on lease requests; unknown until one came. */
  private shard: number | undefined;

  constructor(
    private readonly state: DurableObjectState,
    private readonly env: Env,
  ) {
    const settings = readSettings(env);
    this.countRequest = objectRequestCounter(state.storage, env);
    this.offers = new JobOffers(new DurableObjectSqlDatabase(state.storage));
    const keys = new KeyClient(env);
    this.keys = keys;
    const app = createBaseApp({ keys, tools: new ToolRegistry(builtinTools), runnerProtocol: true });
    app.post('/v1/runner/lease', async (c) => {
      const key = c.get('key');
      const input = parseInput(
        leaseRequestSchema,
        await readJsonBody(c.req.raw, settings.maxBodyBytes),
        'runner report',
      );
      const holder = { keyId: key.id, workspaces: key.workspaces };
      const job = await this.lease(
        env,
        input.runnerId,
        holder,
        { execOnly: input.execOnly },
        input.waitMs ?? 0,
        c.req.raw.signal,
      );
      return job ? c.json({ job }) : c.body(null, 204);
    });
    app.post(`${INTERNAL_PREFIX}${dispatcherCalls.keyChanged.path}`, internalOnly(), async (c) => {
      keys.forget((await readCallBody(dispatcherCalls.keyChanged, c.req.raw, settings.maxBodyBytes)).id);
      return answerCall(dispatcherCalls.keyChanged, undefined);
    });
    app.post(`${INTERNAL_PREFIX}${dispatcherCalls.offer.path}`, internalOnly(), async (c) => {
      const offer = await readCallBody(dispatcherCalls.offer, c.req.raw, settings.maxBodyBytes);
      this.offers.add(offer);
      if ((await state.storage.getAlarm()) === null) await state.storage.setAlarm(Date.now() + OFFER_CHECK_MS);
      return answerCall(dispatcherCalls.offer, { claimed: await this.claim(offer) });
    });
    assertRoutesGuarded(app);
    this.app = app;
  }

  fetch(request: Request): Promise<Response> {
    this.countRequest();
    // Runner keys' objects tell this shard, by its name, when a key it holds a copy of changes.
    const shard = Number(request.headers.get(DISPATCHER_SHARD_HEADER) ?? Number.NaN);
    if (this.shard === undefined && Number.isInteger(shard) && shard >= 0) {
      this.shard = shard;
      this.keys.watcher = dispatcherWatcher(shard);
    }
    return Promise.resolve(this.app.fetch(request));
  }

  /**
   * Drops the offers held since the last look whose jobs no longer wait (leased from another
   * shard, stopped, their workspace deleted), and looks again while any offer is held.
   */
  async alarm(): Promise<void> {
    const mark = this.checkedUpTo;
    this.checkedUpTo = this.offers.newest();
    for (const offer of this.offers.upTo(mark, OFFER_CHECK_BATCH)) {
      if (this.claimed.has(offer.jobId)) continue;
      try {
        const answer = await callObject(workspaceObject(this.env, offer.workspace), workspaceCalls.jobWaits, {
          jobId: offer.jobId,
        });
        if (!answer?.waits) this.offers.remove(offer.jobId);
      } catch (error) {
        consoleLog(`could not ask whether job ${offer.jobId} still waits; the next look asks again`, error);
      }
    }
    if (this.offers.newest() > 0) await this.state.storage.setAlarm(Date.now() + OFFER_CHECK_MS);
  }

  /**
   * Wakes the leases waiting here and answers whether one of them dealt with the offer: false at
   * once when none waits here whose runner key reaches the workspace, and false when none took it
   * within OFFER_CLAIM_MS (busy runners), so the Worker offers it to the next shard as well. The
   * offer stays here either way; a copy another shard's runner took is dropped when its workspace
   * object answers that it no longer waits.
   */
  private async claim(offer: JobMessage): Promise<boolean> {
    const waiters = [...this.waiting].filter(([, waiter]) => scopeCovers(waiter.scope, offer.workspace));
    if (waiters.length === 0) return false;
    const claimed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), OFFER_CLAIM_MS);
      const settle = (value: boolean) => {
        clearTimeout(timer);
        if (this.claims.get(offer.jobId) === done) this.claims.delete(offer.jobId);
        resolve(value);
      };
      const done = () => settle(true);
      this.claims.set(offer.jobId, done);
    });
    for (const [wake] of waiters) wake();
    return claimed;
  }

  /**
   * Asks the workspace objects, one offer each (its oldest, the workspace served least recently
   * first) and only in the runner key's scope, to lease the offered job to the runner. An offer
   * whose job no longer waits (leased, stopped, its workspace deleted) is dropped; one that must
   * wait (its workspace runs its most processes, or it is a start and the runner asked for an
   * exec) stays. With no offer taken, waits up to `waitMs` for one to arrive.
   */
  private async lease(
    env: Env,
    runnerId: string,
    holder: LeaseHolder,
    wish: LeaseWish,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<unknown> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const heads = this.offers
        .heads(this.claimed, holder.workspaces)
        .sort((a, b) => (this.served.get(a.workspace) ?? 0) - (this.served.get(b.workspace) ?? 0) || a.seq - b.seq);
      let skipped = false;
      // An offer dropped (leased elsewhere, or no longer waiting) may hide a newer one of its workspace.
      let dropped = false;
      for (const offer of heads) {
        // Another lease may be asking about it (and may leave it): looked at again shortly.
        if (this.claimed.has(offer.jobId)) {
          skipped = true;
          continue;
        }
        this.claimed.add(offer.jobId);
        try {
          const answer = await callObject(workspaceObject(env, offer.workspace), workspaceCalls.leaseJob, {
            jobId: offer.jobId,
            runnerId,
            holder,
            wish,
            shard: this.shard,
          });
          if (answer?.later) {
            if (wish.execOnly) {
              // Held back from an exec-only request, the job may suit a request that takes any: those re-check.
              for (const [wake, waiter] of [...this.waiting]) if (!waiter.execOnly) wake();
            } else {
              // Held back by its workspace (it runs its most processes): it waits for a slot, as on any shard.
              this.claims.get(offer.jobId)?.();
            }
            continue;
          }
          this.offers.remove(offer.jobId);
          this.claims.get(offer.jobId)?.();
          dropped = true;
          if (answer?.job) {
            this.served.set(offer.workspace, ++this.turn);
            return answer.job;
          }
        } finally {
          this.claimed.delete(offer.jobId);
        }
      }
      if (dropped) continue;
      const left = Math.min(deadline - Date.now(), skipped || this.claimed.size > 0 ? CLAIM_RECHECK_MS : Infinity);
      if (deadline - Date.now() <= 0 || signal.aborted) return undefined;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.waiting.set(wake, { execOnly: wish.execOnly ?? false, scope: holder.workspaces });
      });
    }
  }
}

/** Job ids the Queue delivered and no runner has been sent to yet; one row per job however often it came. */
class JobOffers {
  constructor(private readonly db: SqlDatabase) {
    db.script(
      'CREATE TABLE IF NOT EXISTS job_offers (job_id TEXT PRIMARY KEY, workspace TEXT NOT NULL, seq INTEGER NOT NULL)',
    );
  }

  add(message: JobMessage): void {
    this.db.query(
      'INSERT INTO job_offers (job_id, workspace, seq) VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_offers)) ON CONFLICT (job_id) DO NOTHING',
      message.jobId,
      message.workspace,
    );
  }

  /** The oldest offer of each workspace in `scope`, of those not being asked about already. */
  heads(claimed: ReadonlySet<string>, scope: WorkspaceScope): (JobMessage & { seq: number })[] {
    const filter = scopeFilter(scope);
    return this.db
      .query<{ job_id: string; workspace: string; seq: number }>(
        `SELECT offer.job_id AS job_id, offer.workspace AS workspace, offer.seq AS seq FROM job_offers AS offer
         JOIN (SELECT workspace, MIN(seq) AS seq FROM job_offers
               WHERE job_id NOT IN (SELECT value FROM json_each(?)) ${filter === undefined ? '' : 'AND workspace IN (SELECT value FROM json_each(?))'}
               GROUP BY workspace) AS head
         ON head.workspace = offer.workspace AND head.seq = offer.seq`,
        JSON.stringify([...claimed]),
        ...(filter === undefined ? [] : [filter]),
      )
      .map((row) => ({ jobId: row.job_id, workspace: row.workspace, seq: row.seq }));
  }

  remove(jobId: string): void {
    this.db.query('DELETE FROM job_offers WHERE job_id = ?', jobId);
  }

  /** The seq of the newest offer held, 0 with none. */
  newest(): number {
    return this.db.query<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM job_offers')[0]?.seq ?? 0;
  }

  /** Offers up to seq `mark`, oldest first, at most `limit`. */
  upTo(mark: number, limit: number): JobMessage[] {
    return this.db
      .query<{ job_id: string; workspace: string }>(
        'SELECT job_id, workspace FROM job_offers WHERE seq <= ? ORDER BY seq LIMIT ?',
        mark,
        limit,
      )
      .map((row) => ({ jobId: row.job_id, workspace: row.workspace }));
  }
}

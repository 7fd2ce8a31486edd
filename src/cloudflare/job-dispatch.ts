// The workspace object's hand-off of queued jobs to the Queue (the dispatcher leases them to runners).
import type { ProcessStore } from '../processes/process-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { Env } from './bindings.ts';
import { consoleLog as log } from '../core/log.ts';

/**
 * A job still queued this long after its message was sent is sent again: a message that never
 * reached a dispatcher shard (lost by the Queue, or by `wrangler dev`'s local Queue when the
 * Worker restarted) does not leave the job waiting for ever.
 */
export const RESEND_MS = 30_000;

/**
 * Hands queued jobs to the Queue: each job id once per time it is queued (a job requeued after
 * its lease ran out goes again), and again every RESEND_MS while it still waits. A send that
 * fails is retried on the next request or alarm; the dispatcher and this object's lease make a
 * repeated delivery harmless.
 */
export class JobDispatch {
  private sending: Promise<void> | undefined;
  /** Set when jobs were queued while a send ran: it goes round once more. */
  private again = false;
  /** Set when a lease was refused for now (the workspace ran its most processes): the next end of a process offers the jobs again. */
  heldBack = false;
  /** The dispatcher shard that leased this workspace's last job (see jobMessageSchema). */
  shard: number | undefined;

  constructor(
    private readonly db: SqlDatabase,
    private readonly processes: ProcessStore,
    private readonly env: Pick<Env, 'JOBS'>,
    private readonly now: () => number = Date.now,
  ) {
    db.script('CREATE TABLE IF NOT EXISTS job_dispatch (job_id TEXT PRIMARY KEY, attempts INTEGER NOT NULL)');
    // Added with RESEND_MS; a row from before counts as sent long ago.
    try {
      db.script('ALTER TABLE job_dispatch ADD COLUMN sent_at INTEGER NOT NULL DEFAULT 0');
    } catch (error) {
      if (!/duplicate column/i.test((error as Error).message)) throw error;
    }
  }

  /** Offers every queued job again, waking the dispatcher's waiting leases: a slot freed for jobs held back. */
  reoffer(): Promise<void> {
    this.heldBack = false;
    this.db.query('DELETE FROM job_dispatch');
    return this.send();
  }

  send(): Promise<void> {
    if (this.sending) {
      this.again = true;
      return this.sending;
    }
    this.sending = (async () => {
      do {
        this.again = false;
        await this.sendQueued();
      } while (this.again);
    })().finally(() => (this.sending = undefined));
    return this.sending;
  }

  private async sendQueued(): Promise<void> {
    const queued = this.processes.queuedJobs();
    const sent = new Map(
      this.db
        .query<{ job_id: string; attempts: number; sent_at: number }>(
          'SELECT job_id, attempts, sent_at FROM job_dispatch',
        )
        .map((row) => [row.job_id, row]),
    );
    for (const job of queued) {
      const earlier = sent.get(job.id);
      if (earlier?.attempts === job.attempts && this.now() - earlier.sent_at < RESEND_MS) continue;
      const record = this.processes.record(job.id);
      if (!record) continue;
      try {
        await this.env.JOBS.send({ workspace: record.workspace, jobId: job.id, shard: this.shard });
      } catch (error) {
        log(`could not queue job ${job.id}; retrying on the next request or alarm`, error);
        return;
      }
      this.db.query(
        'INSERT INTO job_dispatch (job_id, attempts, sent_at) VALUES (?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET attempts = excluded.attempts, sent_at = excluded.sent_at',
        job.id,
        job.attempts,
        this.now(),
      );
    }
    // Jobs no longer queued need no record of their sending.
    const waiting = new Set(queued.map((job) => job.id));
    for (const id of sent.keys()) if (!waiting.has(id)) this.db.query('DELETE FROM job_dispatch WHERE job_id = ?', id);
  }
}

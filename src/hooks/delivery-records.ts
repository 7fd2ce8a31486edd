// The answers of webhook deliveries by delivery id, so a repeated delivery answers as the first
// one did without applying anything again, however many arrive at once.
import type { CallAnswer } from '../core/call-answer.ts';
import { errorBody, errorStatus } from '../core/errors.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';

/** How long an answer is kept for replays: at least the 7 days the contract promises. */
export const REPLAY_RETENTION_MS = 7 * 24 * 3_600_000;
/** Old answers are swept at most this often, on the way of a delivery. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** A delivery's answer, and whether a repeat must get it (false: the delivery may be tried again). */
export interface DeliveryOutcome {
  answer: CallAnswer;
  keep: boolean;
}

type RecordRow = { state: 'running' | 'done'; status: number; answer: string; headers: string };

export class DeliveryRecords {
  /** Deliveries running in this process: a repeat that arrives meanwhile waits for the first one's answer. */
  private readonly running = new Map<string, Promise<CallAnswer>>();
  private sweptAt = -Infinity;

  constructor(
    private readonly db: SqlDatabase,
    private readonly now: () => number = Date.now,
  ) {
    db.script(`
      CREATE TABLE IF NOT EXISTS hook_deliveries (
        hook_id TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        state TEXT NOT NULL,
        status INTEGER NOT NULL,
        answer TEXT NOT NULL,
        headers TEXT NOT NULL,
        received_at INTEGER NOT NULL,
        PRIMARY KEY (hook_id, delivery_id)
      );
      CREATE INDEX IF NOT EXISTS hook_deliveries_received ON hook_deliveries (received_at);
    `);
  }

  /**
   * Runs `deliver` once per hook and delivery id: a repeat answers the recorded answer, or waits
   * for the running one. The claim is written before the delivery runs and everything up to it is
   * synchronous, so concurrent repeats in this process can never both run.
   */
  once(hookId: string, deliveryId: string, deliver: () => Promise<DeliveryOutcome>): Promise<CallAnswer> {
    const name = `${hookId}\n${deliveryId}`;
    const running = this.running.get(name);
    if (running) return running.then(replayed);
    this.sweepWhenDue();
    const recorded = this.db.query<RecordRow>(
      'SELECT state, status, answer, headers FROM hook_deliveries WHERE hook_id = ? AND delivery_id = ?',
      hookId,
      deliveryId,
    )[0];
    if (recorded)
      return Promise.resolve(
        replayed(recorded.state === 'done' ? toAnswer(recorded) : this.interrupted(hookId, deliveryId)),
      );
    this.db.query(
      `INSERT INTO hook_deliveries (hook_id, delivery_id, state, status, answer, headers, received_at) VALUES (?, ?, 'running', 0, '', '{}', ?)`,
      hookId,
      deliveryId,
      this.now(),
    );
    const settle = async (): Promise<CallAnswer> => {
      try {
        const outcome = await deliver();
        if (outcome.keep) this.finish(hookId, deliveryId, outcome.answer);
        else this.release(hookId, deliveryId);
        return outcome.answer;
      } catch (error) {
        this.release(hookId, deliveryId);
        throw error;
      } finally {
        this.running.delete(name);
      }
    };
    const delivery = settle();
    this.running.set(name, delivery);
    return delivery;
  }

  /** Removes the answers of deliveries received more than the retention ago; returns how many. */
  sweep(): number {
    this.sweptAt = this.now();
    return this.db.query(
      'DELETE FROM hook_deliveries WHERE received_at < ? RETURNING delivery_id',
      this.now() - REPLAY_RETENTION_MS,
    ).length;
  }

  private sweepWhenDue(): void {
    if (this.now() - this.sweptAt >= SWEEP_INTERVAL_MS) this.sweep();
  }

  private finish(hookId: string, deliveryId: string, answer: CallAnswer): void {
    this.db.query(
      `UPDATE hook_deliveries SET state = 'done', status = ?, answer = ?, headers = ? WHERE hook_id = ? AND delivery_id = ?`,
      answer.status,
      answer.json,
      JSON.stringify(answer.headers),
      hookId,
      deliveryId,
    );
  }

  private release(hookId: string, deliveryId: string): void {
    this.db.query('DELETE FROM hook_deliveries WHERE hook_id = ? AND delivery_id = ?', hookId, deliveryId);
  }

  /**
   * A claim with nothing running behind it: the server stopped while the delivery ran, so its
   * patch may or may not have been applied. That answer is kept, since applying it again could
   * apply it twice.
   */
  private interrupted(hookId: string, deliveryId: string): CallAnswer {
    const body = errorBody(
      'conflict',
      `Delivery ${deliveryId} was interrupted by a server restart and may or may not have been applied; check the workspace, then send it with a new delivery id.`,
      { hookId, deliveryId },
    );
    const answer: CallAnswer = { status: errorStatus.conflict, json: JSON.stringify(body), headers: {} };
    this.finish(hookId, deliveryId, answer);
    return answer;
  }
}

function toAnswer(row: RecordRow): CallAnswer {
  return { status: row.status, json: row.answer, headers: JSON.parse(row.headers) as Record<string, string> };
}

/** A repeat's answer: the first one's, marked as a replay. */
function replayed(answer: CallAnswer): CallAnswer {
  return { ...answer, headers: { ...answer.headers, 'x-toolgate-replayed': 'true' } };
}

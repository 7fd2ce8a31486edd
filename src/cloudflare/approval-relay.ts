// Which key objects hear of a workspace object's approvals as they change: those whose approvals
// streams are open and whose scope holds the workspace (they ask, scoped-listings.ts), and no other.
import type { Approval } from '../approvals/approval-store.ts';
import { keyCalls } from '../contract/object-calls.ts';
import { consoleLog as log } from '../core/log.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { callObject, keyObject, type Env } from './bindings.ts';

export class ApprovalRelay {
  /** The changes sent so far: one change at a time, in order, so a stream never shows a decided approval as pending again. */
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: SqlDatabase,
    private readonly env: Env,
    private readonly now: () => number = Date.now,
  ) {
    db.script('CREATE TABLE IF NOT EXISTS approval_watchers (watcher TEXT PRIMARY KEY, until INTEGER NOT NULL)');
  }

  /** Key object `watcher` hears of every change for the next `ms`. */
  watch(watcher: string, ms: number): void {
    this.db.query(
      'INSERT INTO approval_watchers (watcher, until) VALUES (?, ?) ON CONFLICT (watcher) DO UPDATE SET until = excluded.until',
      watcher,
      this.now() + ms,
    );
  }

  /**
   * Tells each watching key object of a change. A call that fails is logged and not retried (a
   * stream then misses that change; docs/api.md says a client lists approvals after it connects);
   * a key object with no stream open any more is no longer told.
   */
  changed(approval: Approval): void {
    this.last = this.last.then(async () => {
      this.db.query('DELETE FROM approval_watchers WHERE until <= ?', this.now());
      const watchers = this.db.query<{ watcher: string; until: number }>(
        'SELECT watcher, until FROM approval_watchers',
      );
      await Promise.all(
        watchers.map(async ({ watcher, until }) => {
          try {
            const answer = await callObject(keyObject(this.env, watcher), keyCalls.approvalChanged, { approval });
            // Unless it asked again meanwhile (a stream opened since).
            if (answer?.watching === false)
              this.db.query('DELETE FROM approval_watchers WHERE watcher = ? AND until = ?', watcher, until);
          } catch (error) {
            log(`could not tell key object ${watcher} of approval ${approval.id}`, error);
          }
        }),
      );
    });
  }
}

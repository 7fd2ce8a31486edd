// Webhook configurations: the secret that verifies a hook's deliveries, the workspace they patch,
// and the admin key they run as.
import type { SqlDatabase } from '../storage/sql-database.ts';
import type { HookTarget } from '../contract/store-records.ts';

/** A hook as its deliveries need it, without its secret: what may travel between a home's parts. */
/** A hook as its deliveries need it (its workspace, the owner key they run as, whether to checkpoint), never its secret. */
export type { HookTarget };

export interface Hook extends HookTarget {
  /** Kept as given, since verifying an HMAC needs the secret itself; never part of an answer. */
  secret: string;
  /** Deliveries must carry a fresh signed timestamp, so a captured one cannot be replayed later. */
  requireTimestamp: boolean;
  createdAt: string;
}

type HookRow = {
  id: string;
  workspace: string;
  secret: string;
  owner_key_id: string;
  checkpoint: number;
  require_timestamp: number;
  created_at: string;
};

const HOOK_COLUMNS = 'id, workspace, secret, owner_key_id, checkpoint, require_timestamp, created_at';

export class HookStore {
  constructor(private readonly db: SqlDatabase) {
    db.script(`
      CREATE TABLE IF NOT EXISTS hooks (
        id TEXT PRIMARY KEY,
        workspace TEXT NOT NULL,
        secret TEXT NOT NULL,
        owner_key_id TEXT NOT NULL,
        checkpoint INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `);
    // A column added after the first release; a data dir from before gains it here.
    try {
      db.script('ALTER TABLE hooks ADD COLUMN require_timestamp INTEGER NOT NULL DEFAULT 0');
    } catch (error) {
      if (!/duplicate column/i.test((error as Error).message)) throw error;
    }
  }

  /** Creates the hook or replaces its configuration; a replaced hook keeps its `createdAt`. */
  put(input: Omit<Hook, 'createdAt'>): { hook: Hook; created: boolean } {
    const now = new Date().toISOString();
    return this.db.transaction(() => {
      const created = this.get(input.id) === undefined;
      this.db.query(
        `INSERT INTO hooks (id, workspace, secret, owner_key_id, checkpoint, require_timestamp, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET workspace = excluded.workspace, secret = excluded.secret, owner_key_id = excluded.owner_key_id,
           checkpoint = excluded.checkpoint, require_timestamp = excluded.require_timestamp, updated_at = excluded.updated_at`,
        input.id,
        input.workspace,
        input.secret,
        input.ownerKeyId,
        input.checkpoint ? 1 : 0,
        input.requireTimestamp ? 1 : 0,
        now,
        now,
      );
      return { hook: this.get(input.id)!, created };
    });
  }

  get(id: string): Hook | undefined {
    const row = this.db.query<HookRow>(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE id = ?`, id)[0];
    return row && toHook(row);
  }

  /** Every hook, by id. */
  list(): Hook[] {
    return this.db.query<HookRow>(`SELECT ${HOOK_COLUMNS} FROM hooks ORDER BY id`).map(toHook);
  }

  /** Removes a hook: its deliveries are then refused as a wrong signature is. False when there was none. */
  delete(id: string): boolean {
    return this.db.query<{ id: string }>('DELETE FROM hooks WHERE id = ? RETURNING id', id).length > 0;
  }
}

function toHook(row: HookRow): Hook {
  return {
    id: row.id,
    workspace: row.workspace,
    secret: row.secret,
    ownerKeyId: row.owner_key_id,
    checkpoint: row.checkpoint === 1,
    requireTimestamp: row.require_timestamp === 1,
    createdAt: row.created_at,
  };
}

/** A hook as answers show it: never its secret. */
export function publicHook(hook: Hook): {
  id: string;
  workspace: string;
  checkpoint: boolean;
  requireTimestamp: boolean;
  createdAt: string;
} {
  return {
    id: hook.id,
    workspace: hook.workspace,
    checkpoint: hook.checkpoint,
    requireTimestamp: hook.requireTimestamp,
    createdAt: hook.createdAt,
  };
}

/** The hook without its secret. */
export function hookTarget(hook: Hook): HookTarget {
  return { id: hook.id, workspace: hook.workspace, ownerKeyId: hook.ownerKeyId, checkpoint: hook.checkpoint };
}

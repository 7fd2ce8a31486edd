// API keys: stored as SHA-256 hashes only, looked up by the hash of a presented secret.
import type { z } from 'zod';
import type { ApprovalMode, approvalRuleInput, KeyRole, NewKey, quotaInput } from '../contract/http-requests.ts';
import { ToolError } from '../core/errors.ts';
import { scopeCovers, scopeWithin } from '../core/workspace-scope.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { sha256Hex } from '../core/content-hash.ts';
import type { StoredKey } from '../contract/store-records.ts';

export type { ApprovalMode, KeyRole, NewKey };
/** An explicit approval rule: the first one matching a call decides it, before the mode. */
export type ApprovalRule = z.output<typeof approvalRuleInput>;
export type Quota = z.output<typeof quotaInput>;

/** An API key as the server holds it (never its secret): the record the directory object also sends between objects. */
export type ApiKey = StoredKey;

/** The id of the first admin key, the one configured by TOOLGATE_API_KEY or generated at first start. */
export const BOOTSTRAP_KEY_ID = 'key_bootstrap_admin';
/** The id of the runner key the server gives its own runner (a new secret at each start). */
export const BOOTSTRAP_RUNNER_KEY_ID = 'key_bootstrap_runner';
/** Keys the server itself manages: revoked or rotated by its configuration, never through the API. */
const SERVER_KEYS = new Map([
  [
    BOOTSTRAP_KEY_ID,
    'The bootstrap admin key cannot be revoked here; change TOOLGATE_API_KEY and restart the server to rotate it.',
  ],
  [
    BOOTSTRAP_RUNNER_KEY_ID,
    "The server's own runner key cannot be revoked here; it changes at every start, and TOOLGATE_RUNNER=off removes it.",
  ],
]);
const SECRET_PREFIX = 'tg_';

type KeyRow = {
  id: string;
  name: string;
  role: KeyRole;
  workspaces: string;
  tools: string | null;
  approval_mode: ApprovalMode;
  rules: string | null;
  quota: string | null;
  rate_limit: number | null;
  notify_url: string | null;
  notify_secret: string | null;
  created_at: string;
};

const KEY_COLUMNS =
  'id, name, role, workspaces, tools, approval_mode, rules, quota, rate_limit, notify_url, notify_secret, created_at';

/** Presented secrets whose hashes, and hashes whose keys, are remembered. */
const MEMO_SIZE = 1024;

export class KeyStore {
  private readonly hashes = new Map<string, string>();
  /**
   * Keys by secret hash, `null` for unknown ones. Sound because one process owns the database and
   * every change to a key goes through this store, which clears it; a revoked key fails at once.
   */
  private readonly keys = new Map<string, ApiKey | null>();

  constructor(private readonly db: SqlDatabase) {
    db.script(`
      CREATE TABLE IF NOT EXISTS api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        workspaces TEXT NOT NULL,
        tools TEXT,
        approval_mode TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
    `);
    // Columns added after the first release; a data dir from before gains them here.
    for (const column of ['rules TEXT', 'quota TEXT', 'rate_limit INTEGER', 'notify_url TEXT', 'notify_secret TEXT']) {
      try {
        db.script(`ALTER TABLE api_keys ADD COLUMN ${column}`);
      } catch (error) {
        if (!/duplicate column/i.test((error as Error).message)) throw error;
      }
    }
  }

  /** Makes `secret` the bootstrap admin key (replacing an earlier bootstrap secret). */
  async ensureBootstrapAdmin(secret: string): Promise<void> {
    await this.ensureServerKey(BOOTSTRAP_KEY_ID, 'bootstrap admin', 'admin', secret);
  }

  /**
   * Makes `secret` the key of the server's own runner (role runner, every workspace), or revokes
   * that key when the server runs none (`undefined`).
   */
  async ensureBootstrapRunner(secret: string | undefined): Promise<void> {
    if (secret !== undefined)
      return this.ensureServerKey(BOOTSTRAP_RUNNER_KEY_ID, 'in-process runner', 'runner', secret);
    this.db.query(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
      new Date().toISOString(),
      BOOTSTRAP_RUNNER_KEY_ID,
    );
    this.keys.clear();
  }

  private async ensureServerKey(id: string, name: string, role: KeyRole, secret: string): Promise<void> {
    const hash = await sha256Hex(new TextEncoder().encode(secret));
    this.db.query(
      `INSERT INTO api_keys (id, name, role, secret_hash, workspaces, tools, approval_mode, created_at)
       VALUES (?, ?, ?, ?, '["*"]', NULL, 'auto', ?)
       ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash, revoked_at = NULL`,
      id,
      name,
      role,
      hash,
      new Date().toISOString(),
    );
    this.keys.clear();
  }

  /**
   * Creates a key; its secret (and the signing secret of its notices, when it has a notify URL)
   * exist only in this answer: the store keeps the secret's hash.
   */
  async create(
    input: NewKey,
    /** A secret and id chosen by the caller (a home that finds a key's storage from its secret); else new ones. */
    given?: { id: string; secret: string },
  ): Promise<{ key: ApiKey; secret: string; notifySecret: string | undefined }> {
    const secret = given?.secret ?? generateSecret();
    const notifySecret = input.notifyUrl === undefined ? undefined : generateSecret('tgn_');
    const id = given?.id ?? `key_${crypto.randomUUID().replaceAll('-', '').slice(0, 20)}`;
    const approvalMode = input.approvalMode ?? (input.role === 'agent' ? 'safe' : 'auto');
    this.db.query(
      `INSERT INTO api_keys (id, name, role, secret_hash, workspaces, tools, approval_mode, rules, quota, rate_limit, notify_url, notify_secret, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.name,
      input.role,
      await sha256Hex(new TextEncoder().encode(secret)),
      JSON.stringify(input.workspaces),
      input.tools === undefined ? null : JSON.stringify(input.tools),
      approvalMode,
      input.rules === undefined || input.rules.length === 0 ? null : JSON.stringify(input.rules),
      input.quota === undefined ? null : JSON.stringify(input.quota),
      input.rateLimitPerMinute ?? null,
      input.notifyUrl ?? null,
      notifySecret ?? null,
      new Date().toISOString(),
    );
    this.keys.clear();
    return { key: this.get(id)!, secret, notifySecret };
  }

  /** A live key by id. */
  get(id: string): ApiKey | undefined {
    const row = this.db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? AND revoked_at IS NULL`, id)[0];
    return row && toKey(row);
  }

  /** Live keys, oldest first. */
  list(): ApiKey[] {
    return this.db
      .query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE revoked_at IS NULL ORDER BY created_at, id`)
      .map(toKey);
  }

  /** Revokes a key at once: the next request with its secret is `unauthorized`. False when it was not live. */
  revoke(id: string): boolean {
    const managed = SERVER_KEYS.get(id);
    if (managed !== undefined) throw new ToolError('forbidden', managed, { id });
    const [row] = this.db.query<{ id: string }>(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING id',
      new Date().toISOString(),
      id,
    );
    this.keys.clear();
    return row !== undefined;
  }

  /** The secret a key's approval notices are signed with. */
  notifySecret(id: string): string | undefined {
    return (
      this.db.query<{ notify_secret: string | null }>('SELECT notify_secret FROM api_keys WHERE id = ?', id)[0]
        ?.notify_secret ?? undefined
    );
  }

  /** The live key a secret belongs to, or undefined for an unknown or revoked one. */
  async authenticate(secret: string): Promise<ApiKey | undefined> {
    if (secret.length === 0 || secret.length > 512) return undefined;
    const hash = await this.hashOf(secret);
    const known = this.keys.get(hash);
    if (known !== undefined) return known ?? undefined;
    const row = this.db.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE secret_hash = ? AND revoked_at IS NULL`,
      hash,
    )[0];
    const key = row && toKey(row);
    if (this.keys.size >= MEMO_SIZE) this.keys.clear();
    this.keys.set(hash, key ?? null);
    return key;
  }

  private async hashOf(secret: string): Promise<string> {
    const known = this.hashes.get(secret);
    if (known !== undefined) return known;
    const hash = await sha256Hex(new TextEncoder().encode(secret));
    if (this.hashes.size >= MEMO_SIZE) this.hashes.clear();
    this.hashes.set(secret, hash);
    return hash;
  }
}

/** A new random secret: recognisable by its prefix, 256 bits of entropy. */
export function generateSecret(prefix = SECRET_PREFIX): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return prefix + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** Whether the key reaches the workspace: outside its scope a workspace answers as absent. */
export function canSeeWorkspace(key: ApiKey, workspace: string): boolean {
  return scopeCovers(key.workspaces, workspace);
}

/** Whether an admin key may see and revoke `key`: one whose whole scope lies within the admin's. */
export function mayManageKey(admin: ApiKey, key: ApiKey): boolean {
  return admin.role === 'admin' && scopeWithin(key.workspaces, admin.workspaces);
}

/** A key as answers show it: never its secret or its hash. */
export function publicKey(key: ApiKey): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    role: key.role,
    workspaces: key.workspaces,
    tools: key.tools ?? null,
    approvalMode: key.approvalMode,
    rules: key.rules,
    quota: key.quota ?? null,
    rateLimitPerMinute: key.rateLimitPerMinute ?? null,
    notifyUrl: key.notifyUrl ?? null,
    createdAt: key.createdAt,
  };
}

function toKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    workspaces: JSON.parse(row.workspaces) as string[],
    tools: row.tools === null ? undefined : (JSON.parse(row.tools) as string[]),
    approvalMode: row.approval_mode,
    rules: row.rules === null ? [] : (JSON.parse(row.rules) as ApprovalRule[]),
    quota: row.quota === null ? undefined : (JSON.parse(row.quota) as Quota),
    rateLimitPerMinute: row.rate_limit ?? undefined,
    notifyUrl: row.notify_url ?? undefined,
    createdAt: row.created_at,
  };
}

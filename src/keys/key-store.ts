// API keys: stored as SHA-256 hashes only, looked up by the hash of a presented secret.
import type { SqlDatabase } from '../storage/sql-database.ts';
import { sha256Hex } from '../workspace/content-hash.ts';

export type KeyRole = 'agent' | 'approver' | 'admin' | 'runner';
export type ApprovalMode = 'auto' | 'safe' | 'manual';

export interface ApiKey {
  id: string;
  name: string;
  role: KeyRole;
  /** Workspace ids the key may see, or `*` for all. */
  workspaces: string[];
  /** Tool names or `bash:<action>` the key may call; undefined means all tools. */
  tools: string[] | undefined;
  approvalMode: ApprovalMode;
  createdAt: string;
}

/** The id of the first admin key, the one configured by TOOLGATE_API_KEY or generated at first start. */
export const BOOTSTRAP_KEY_ID = 'key_bootstrap_admin';
const SECRET_PREFIX = 'tg_';

type KeyRow = {
  id: string;
  name: string;
  role: KeyRole;
  workspaces: string;
  tools: string | null;
  approval_mode: ApprovalMode;
  created_at: string;
};

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
  }

  /** Makes `secret` the bootstrap admin key (replacing an earlier bootstrap secret). */
  async ensureBootstrapAdmin(secret: string): Promise<void> {
    const hash = await sha256Hex(new TextEncoder().encode(secret));
    this.db.query(
      `INSERT INTO api_keys (id, name, role, secret_hash, workspaces, tools, approval_mode, created_at)
       VALUES (?, 'bootstrap admin', 'admin', ?, '["*"]', NULL, 'auto', ?)
       ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash, revoked_at = NULL`,
      BOOTSTRAP_KEY_ID,
      hash,
      new Date().toISOString(),
    );
    this.keys.clear();
  }

  /** The live key a secret belongs to, or undefined for an unknown or revoked one. */
  async authenticate(secret: string): Promise<ApiKey | undefined> {
    if (secret.length === 0 || secret.length > 512) return undefined;
    const hash = await this.hashOf(secret);
    const known = this.keys.get(hash);
    if (known !== undefined) return known ?? undefined;
    const row = this.db.query<KeyRow>(
      'SELECT id, name, role, workspaces, tools, approval_mode, created_at FROM api_keys WHERE secret_hash = ? AND revoked_at IS NULL',
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
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return SECRET_PREFIX + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function canSeeWorkspace(key: ApiKey, workspace: string): boolean {
  return key.workspaces.includes('*') || key.workspaces.includes(workspace);
}

function toKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    workspaces: JSON.parse(row.workspaces) as string[],
    tools: row.tools === null ? undefined : (JSON.parse(row.tools) as string[]),
    approvalMode: row.approval_mode,
    createdAt: row.created_at,
  };
}

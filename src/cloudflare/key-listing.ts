// Keys as the key routes manage them on the Cloudflare home: each created in its own object, and
// listed from the directory's listing (admin traffic only; no tool call reads it).
import { keyCalls } from '../contract/object-calls.ts';
import { storedKeySchema } from '../contract/store-records.ts';
import { sha256Hex } from '../core/content-hash.ts';
import type { KeyAdmin } from '../keys/key-admin.ts';
import {
  BOOTSTRAP_KEY_ID,
  BOOTSTRAP_RUNNER_KEY_ID,
  generateSecret,
  type ApiKey,
  type NewKey,
} from '../keys/key-store.ts';
import type { SqlDatabase } from '../storage/sql-database.ts';
import { callObject, keyObject, type Env } from './bindings.ts';
import type { KeyClient } from './key-client.ts';
import { keyIdOfHash } from './key-identity.ts';

export class KeyListing implements KeyAdmin {
  constructor(
    private readonly env: Env,
    private readonly db: SqlDatabase,
    private readonly keys: KeyClient,
  ) {
    db.script('CREATE TABLE IF NOT EXISTS key_listing (id TEXT PRIMARY KEY, record TEXT NOT NULL)');
  }

  async create(input: NewKey): Promise<{ key: ApiKey; secret: string; notifySecret: string | undefined }> {
    const secret = generateSecret();
    const id = await keyIdOfHash(await sha256Hex(new TextEncoder().encode(secret)));
    const created = (await callObject(keyObject(this.env, id), keyCalls.create, { id, secret, input }))!;
    this.db.query('INSERT INTO key_listing (id, record) VALUES (?, ?)', id, JSON.stringify(created.key));
    return { key: created.key, secret, notifySecret: created.notifySecret ?? undefined };
  }

  get(id: string): Promise<ApiKey | undefined> {
    return this.keys.get(id);
  }

  /** The keys created here, and the configured ones (asked of their objects, which set them from the configuration). */
  async list(): Promise<ApiKey[]> {
    const listed = this.db
      .query<{ record: string }>('SELECT record FROM key_listing')
      .map((row) => storedKeySchema.parse(JSON.parse(row.record)));
    const configured = await Promise.all([BOOTSTRAP_KEY_ID, BOOTSTRAP_RUNNER_KEY_ID].map((id) => this.keys.get(id)));
    return [...configured.filter((key) => key !== undefined), ...listed].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
    );
  }

  async revoke(id: string): Promise<boolean> {
    const answer = await callObject(keyObject(this.env, id), keyCalls.revoke, { id });
    this.db.query('DELETE FROM key_listing WHERE id = ?', id);
    return answer?.revoked ?? false;
  }
}

// Which key object a presented secret belongs to, found from the secret alone: no table maps secrets to keys.
import { sha256Hex } from '../core/content-hash.ts';
import { readSetting } from '../contract/settings.ts';
import { BOOTSTRAP_KEY_ID, BOOTSTRAP_RUNNER_KEY_ID } from '../keys/key-store.ts';
import type { Env } from './bindings.ts';

/** Presented secrets whose identities are remembered. */
const MEMO_SIZE = 1024;
/** The longest secret looked at; a longer one is no key's (as KeyStore.authenticate holds). */
export const MAX_SECRET_LENGTH = 512;

/** A secret's key id and its hash (the key object compares the hash with the one it stores). */
export interface SecretIdentity {
  id: string;
  hash: string;
}

/**
 * The id of the key a secret would belong to. A key's id is derived from its secret's hash (the
 * hash of the hash, so the id tells nothing of what the object stores), so the object holding it
 * is named by a name the secret gives; the two keys the configuration sets (TOOLGATE_API_KEY,
 * TOOLGATE_RUNNER_KEY) keep their fixed ids, matched by hash.
 */
export class KeyIdentities {
  private readonly memo = new Map<string, SecretIdentity>();
  private configured: Promise<Map<string, string>> | undefined;

  constructor(private readonly env: Env) {}

  async of(secret: string): Promise<SecretIdentity | undefined> {
    if (secret.length === 0 || secret.length > MAX_SECRET_LENGTH) return undefined;
    const known = this.memo.get(secret);
    if (known) return known;
    const hash = await sha256Hex(new TextEncoder().encode(secret));
    const id = (await this.configuredIds()).get(hash) ?? (await keyIdOfHash(hash));
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    const identity = { id, hash };
    this.memo.set(secret, identity);
    return identity;
  }

  /** The hashes of the configured secrets, with the fixed ids they carry. */
  private configuredIds(): Promise<Map<string, string>> {
    this.configured ??= (async () => {
      const ids = new Map<string, string>();
      const runner = readSetting(this.env, 'TOOLGATE_RUNNER_KEY', 'cloudflare');
      if (runner) ids.set(await sha256Hex(new TextEncoder().encode(runner)), BOOTSTRAP_RUNNER_KEY_ID);
      const admin = readSetting(this.env, 'TOOLGATE_API_KEY', 'cloudflare');
      if (admin) ids.set(await sha256Hex(new TextEncoder().encode(admin)), BOOTSTRAP_KEY_ID);
      return ids;
    })();
    return this.configured;
  }
}

/** The id of a key created through the API, from its secret's SHA-256 (hex). */
export async function keyIdOfHash(hash: string): Promise<string> {
  return `key_${(await sha256Hex(new TextEncoder().encode(`toolgate key id:${hash}`))).slice(0, 24)}`;
}

// What the key routes manage keys through: the Node home's one store, or the Cloudflare home's key objects.
import type { ApiKey, NewKey } from './key-store.ts';

export interface KeyAdmin {
  /** Creates a key; its secret (and its notices' signing secret) appear in this answer only. */
  create(input: NewKey): Promise<{ key: ApiKey; secret: string; notifySecret: string | undefined }>;
  /** A live key by id. */
  get(id: string): ApiKey | undefined | Promise<ApiKey | undefined>;
  /** Live keys, oldest first. */
  list(): ApiKey[] | Promise<ApiKey[]>;
  /** Revokes a key at once; false when it was not live. */
  revoke(id: string): boolean | Promise<boolean>;
}

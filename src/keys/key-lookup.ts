// Keys as calls need them after admission: an approved call's key may have been revoked meanwhile.
import type { ApiKey } from './key-store.ts';

export interface KeyLookup {
  get(id: string): ApiKey | undefined | Promise<ApiKey | undefined>;
  notifySecret(id: string): string | undefined | Promise<string | undefined>;
}

// How a workspace object asks the directory object for keys, rate limits and the quota ledger.
import type { KeyAuthority } from '../http/app-deps.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { QuotaLedger } from '../metering/quota-ledger.ts';
import type { CallLimiter } from '../metering/rate-limiter.ts';
import {
  directoryCalls,
  type ObjectCall,
  type ObjectCallAnswer,
  type ObjectCallBody,
} from '../contract/object-calls.ts';
import { callObject, directoryObject, type Env } from './bindings.ts';

/** The directory object as this object needs it: keys, rate limits and the quota ledger. */
export class DirectoryClient implements KeyAuthority, KeyLookup, CallLimiter, QuotaLedger {
  constructor(private readonly env: Env) {}

  async authenticate(secret: string): Promise<ApiKey | undefined> {
    return this.call(directoryCalls.authenticate, { secret });
  }

  async get(id: string): Promise<ApiKey | undefined> {
    return this.call(directoryCalls.key, { id });
  }

  async notifySecret(id: string): Promise<string | undefined> {
    return (await this.call(directoryCalls.notifySecret, { id }))?.secret ?? undefined;
  }

  async take(keyId: string, perMinute: number): Promise<void> {
    await this.call(directoryCalls.rateLimit, { keyId, perMinute });
  }

  async admit(key: ApiKey, options: { usesProcessTime: boolean }): Promise<void> {
    await this.call(directoryCalls.quotaAdmit, { key, usesProcessTime: options.usesProcessTime });
  }

  async addProcessSeconds(keyId: string, startedAt: number, seconds: number): Promise<void> {
    await this.call(directoryCalls.quotaSeconds, { keyId, startedAt, seconds });
  }

  async processSecondsSpent(key: ApiKey): Promise<boolean> {
    return (await this.call(directoryCalls.quotaSpent, { key }))?.spent ?? false;
  }

  private call<Call extends ObjectCall>(call: Call, body: ObjectCallBody<Call>): Promise<ObjectCallAnswer<Call>> {
    return callObject(directoryObject(this.env), call, body);
  }
}

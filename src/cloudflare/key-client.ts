// How an object reaches keys, rate limits and quota ledgers: each key's own object, found from the
// presented secret, with a short-lived copy of the records a workspace object has seen.
import type { KeyAuthority } from '../http/app-deps.ts';
import type { KeyLookup } from '../keys/key-lookup.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { CallAdmission } from '../metering/call-admission.ts';
import type { QuotaLedger } from '../metering/quota-ledger.ts';
import type { CallLimiter } from '../metering/rate-limiter.ts';
import { ToolError } from '../core/errors.ts';
import { keyCalls, type ObjectCall, type ObjectCallAnswer, type ObjectCallBody } from '../contract/object-calls.ts';
import { callObject, keyObject, type Env } from './bindings.ts';
import { KeyIdentities } from './key-identity.ts';

/** How long a copy of a key serves without asking its object: a safety net, since its object tells of every change. */
export const KEY_COPY_MS = 30_000;
/** Copies kept at most; past it they are all dropped (they are asked for again). */
const MAX_COPIES = 10_000;

interface KeyCopy {
  key: ApiKey;
  /** The hash of the secret it was authenticated with; unset for a copy asked for by id. */
  hash: string | undefined;
  at: number;
}

/**
 * Keys, rate limits and quotas, each from its key's object. A workspace object names itself as
 * the `watcher` and keeps copies of the keys it has seen, which the key's object drops (`forget`)
 * before it answers a revocation; any other object keeps none and asks every time.
 */
export class KeyClient implements KeyAuthority, KeyLookup, CallLimiter, QuotaLedger, CallAdmission {
  private readonly identities: KeyIdentities;
  private readonly copies = new Map<string, KeyCopy>();
  /** Rises with every dropped copy: an answer asked for before a drop is not kept, as it may be the dropped key. */
  private drops = 0;
  /** The workspace object this client serves, which its keys' objects tell of changes; none keeps no copies. */
  watcher: string | undefined;

  constructor(
    private readonly env: Env,
    private readonly now: () => number = Date.now,
  ) {
    this.identities = new KeyIdentities(env);
  }

  async authenticate(secret: string): Promise<ApiKey | undefined> {
    const identity = await this.identities.of(secret);
    if (!identity) return undefined;
    const copy = this.fresh(identity.id);
    if (copy?.hash === identity.hash) return copy.key;
    const drops = this.drops;
    const watcher = this.watcher;
    const key = await this.call(identity.id, keyCalls.authenticate, { id: identity.id, secret, watcher });
    if (key) this.keep(key, identity.hash, watcher, drops);
    return key;
  }

  async get(id: string): Promise<ApiKey | undefined> {
    const copy = this.fresh(id);
    if (copy) return copy.key;
    const drops = this.drops;
    const watcher = this.watcher;
    const key = await this.call(id, keyCalls.key, { id, watcher });
    if (key) this.keep(key, undefined, watcher, drops);
    return key;
  }

  /** The key changed or was revoked (its object says so): the copy goes, and answers already on their way are not kept. */
  forget(id: string): void {
    this.copies.delete(id);
    this.drops += 1;
  }

  async notifySecret(id: string): Promise<string | undefined> {
    return (await this.call(id, keyCalls.notifySecret, { id }))?.secret ?? undefined;
  }

  async take(keyId: string, perMinute: number): Promise<void> {
    await this.admitOnce(keyId, { perMinute, quota: false, usesProcessTime: false });
  }

  async admit(key: ApiKey, options: { usesProcessTime: boolean }): Promise<void> {
    await this.admitOnce(key.id, { perMinute: 0, quota: true, usesProcessTime: options.usesProcessTime });
  }

  /**
   * A tool call's one request to its key's object: the rate limit and the quota taken together,
   * and the key's record checked live, which renews this object's copy of it (so a key in use is
   * not asked for again every KEY_COPY_MS).
   */
  async admitCall(
    key: ApiKey,
    options: { perMinute: number; quota: boolean; usesProcessTime: boolean },
  ): Promise<void> {
    await this.admitOnce(key.id, options);
  }

  private async admitOnce(
    id: string,
    options: { perMinute: number; quota: boolean; usesProcessTime: boolean },
  ): Promise<void> {
    const drops = this.drops;
    const watcher = this.watcher;
    const live = await this.call(id, keyCalls.admit, { id, watcher, ...options });
    if (!live) {
      this.forget(id);
      throw new ToolError('unauthorized', 'The API key is unknown or revoked; check the key you send.');
    }
    this.keep(live, undefined, watcher, drops);
  }

  async addProcessSeconds(keyId: string, startedAt: number, seconds: number): Promise<void> {
    await this.call(keyId, keyCalls.quotaSeconds, { id: keyId, startedAt, seconds });
  }

  async processSecondsSpent(key: ApiKey): Promise<boolean> {
    return (await this.call(key.id, keyCalls.quotaSpent, { key }))?.spent ?? false;
  }

  private fresh(id: string): KeyCopy | undefined {
    const copy = this.copies.get(id);
    if (copy && this.now() - copy.at < KEY_COPY_MS) return copy;
    return undefined;
  }

  /** Keeps a copy when its object will tell of a change (a watcher was named) and nothing was dropped meanwhile. */
  private keep(key: ApiKey, hash: string | undefined, watcher: string | undefined, drops: number): void {
    if (watcher === undefined || drops !== this.drops) return;
    if (this.copies.size >= MAX_COPIES) this.copies.clear();
    const earlier = this.copies.get(key.id);
    this.copies.set(key.id, { key, hash: hash ?? earlier?.hash, at: this.now() });
  }

  private call<Call extends ObjectCall>(
    id: string,
    call: Call,
    body: ObjectCallBody<Call>,
  ): Promise<ObjectCallAnswer<Call>> {
    return callObject(keyObject(this.env, id), call, body);
  }
}

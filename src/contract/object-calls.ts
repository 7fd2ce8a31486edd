// The calls between the Cloudflare home's Durable Objects, declared once: each is a path under the
// internal prefix, the JSON body it takes and the JSON it answers. The receiving object parses the
// body with the call's schema; the calling one types the body from it and parses the answer, so
// two versions of an object that drift apart (during a rolling deploy) fail with a clear error.
import { z } from 'zod';
import { usageRowSchema, workspaceInfoSchema } from './http-answers.ts';
import { approvalStatusSchema, keyInput, usageGroupSchema } from './http-requests.ts';
import { leasedJobSchema, manifestEntrySchema } from './runner-protocol.ts';
import { hookTargetSchema, leaseHolderSchema, storedApprovalSchema, storedKeySchema } from './store-records.ts';
import { blobId, count } from './wire-values.ts';

/** One call between objects: its path under the internal prefix, its body, and its answer (null: none, status 204). */
export interface ObjectCall<Body extends z.ZodType = z.ZodType, Answer extends z.ZodType | null = z.ZodType | null> {
  readonly path: string;
  readonly body: Body;
  readonly answer: Answer;
}

/** The body a caller sends. */
export type ObjectCallBody<Call extends ObjectCall> = z.input<Call['body']>;
/** The answer the receiving object gives; undefined (or nothing) when it answers 204. */
export type ObjectCallAnswerInput<Call extends ObjectCall> = Call['answer'] extends z.ZodType
  ? z.input<Call['answer']> | undefined
  : void;
/** The answer as the caller reads it; undefined when the object answered 204. */
export type ObjectCallAnswer<Call extends ObjectCall> = Call['answer'] extends z.ZodType
  ? z.output<Call['answer']> | undefined
  : undefined;

function objectCall<Body extends z.ZodType, Answer extends z.ZodType | null>(
  path: string,
  body: Body,
  answer: Answer,
): ObjectCall<Body, Answer> {
  return { path, body, answer };
}

// Calls to a key's object (one per key, named by its id, which the key's secret determines):
// its record, its rate limit and its quota ledger. Every call names the key it is about.

const keyId = z.string().min(1).max(100);
/** The workspace object asking, which keeps a short-lived copy of the key and is told when it changes. */
const watcher = z.string().max(100).optional();

export const keyCalls = {
  /** The key a secret belongs to; none (204) when it belongs to no live key. */
  authenticate: objectCall(
    'key/authenticate',
    z.strictObject({ id: keyId, secret: z.string().max(512), watcher }),
    storedKeySchema,
  ),
  /** A live key by id; none (204) when there is none. */
  key: objectCall('key/get', z.strictObject({ id: keyId, watcher }), storedKeySchema),
  /** The secret a key's approval notices are signed with. */
  notifySecret: objectCall(
    'key/notify-secret',
    z.strictObject({ id: keyId }),
    z.looseObject({ secret: z.string().nullable() }),
  ),
  /** Creates the key whose secret is `secret` (its id derived from it); `conflict` when the object already holds one. */
  create: objectCall(
    'key/create',
    z.strictObject({ id: keyId, secret: z.string().min(1).max(512), input: keyInput }),
    z.looseObject({ key: storedKeySchema, notifySecret: z.string().nullable() }),
  ),
  /** Revokes the key; answered once every workspace object holding a copy has dropped it. */
  revoke: objectCall('key/revoke', z.strictObject({ id: keyId }), z.looseObject({ revoked: z.boolean() })),
  /**
   * Admits one call of the live key: takes it from the allowance of `perMinute` a minute (0: none;
   * `rate_limited` when spent, nothing taken from the quota then) and, with `quota`, from the key's
   * quota (`quota_exceeded`). Answers the key's record (a copy's holder keeps it fresh), none (204)
   * when the key is not live, which takes nothing.
   */
  admit: objectCall(
    'key/admit',
    z.strictObject({
      id: keyId,
      watcher,
      perMinute: z.number().int().min(0),
      quota: z.boolean(),
      usesProcessTime: z.boolean(),
    }),
    storedKeySchema,
  ),
  /**
   * An approval of a workspace object in the key's scope was created or changed: for the key's open
   * approvals streams. `watching` false when none is open, and the workspace object stops sending.
   */
  approvalChanged: objectCall(
    'key/approval-changed',
    z.strictObject({ approval: storedApprovalSchema }),
    z.looseObject({ watching: z.boolean() }),
  ),
  /** Whether the key's processSeconds quota is spent in its current period. */
  quotaSpent: objectCall(
    'key/quota-spent',
    z.strictObject({ key: storedKeySchema }),
    z.looseObject({ spent: z.boolean() }),
  ),
  /** Process seconds a key's call used, counted in the period the call started in. */
  quotaSeconds: objectCall(
    'key/quota-seconds',
    z.strictObject({ id: keyId, startedAt: z.number(), seconds: z.number().min(0) }),
    null,
  ),
} as const;

// Calls to the directory: the index of workspace objects and the approvals streams it serves.

export const directoryCalls = {
  /** Enters a workspace in the index the listings that span workspaces ask. */
  register: objectCall('register', z.strictObject({ workspace: z.string() }), null),
  /** The workspace objects the registry holds: what a listing of a key whose scope is every workspace asks. */
  workspaces: objectCall('workspaces', z.strictObject({}), z.looseObject({ names: z.array(z.string()) })),
} as const;

// Calls to a workspace object: its part of the listings that span workspaces, and the leasing of its jobs.

/** Which calls a usage summary adds up (ms since the epoch; the scope's workspaces, `*` for all). */
export const usageQuerySchema = z.strictObject({
  from: z.number(),
  to: z.number(),
  groupBy: usageGroupSchema,
  keyId: z.string().optional(),
  workspaces: z.array(z.string()).readonly().optional(),
});
export type UsageQuery = z.output<typeof usageQuerySchema>;

/** A fork travelling to the new workspace's object (see workspace/fork-transfer.ts): `uid` is the fork's. */
const forkUid = z.string().regex(/^[0-9a-f-]{36}$/);
/** What a fork takes from its source's workspace row: the store both read, its settings (JSON) and its counts. */
export const forkedWorkspaceSchema = z.strictObject({
  store: z.string(),
  settings: z.string(),
  version: count,
  files: count,
  bytes: count,
});
const forkCalls = {
  /** Starts receiving: refused with `conflict` when `to` exists. */
  forkBegin: objectCall('fork-begin', z.strictObject({ to: z.string(), uid: forkUid, store: z.string() }), null),
  /** A batch of the source's manifest rows. */
  forkEntries: objectCall(
    'fork-entries',
    z.strictObject({ uid: forkUid, entries: z.array(manifestEntrySchema.extend({ parent: z.string() })) }),
    null,
  ),
  /** A batch of the source's history rows (git files' contents in base64). */
  forkHistory: objectCall(
    'fork-history',
    z.strictObject({
      uid: forkUid,
      gitFiles: z.array(z.strictObject({ path: z.string(), contentBase64: z.string() })),
      gitBlobs: z.array(z.strictObject({ sha256: z.string(), oid: z.string(), size: count })),
      checkpoints: z.array(
        z.strictObject({ seq: z.number().int(), id: z.string(), message: z.string(), createdAt: z.string() }),
      ),
    }),
    null,
  ),
  /** Makes the received fork the workspace `to`, sharing the source's store, with the source's row figures. */
  forkFinish: objectCall(
    'fork-finish',
    z.strictObject({
      to: z.string(),
      uid: forkUid,
      workspace: forkedWorkspaceSchema,
    }),
    workspaceInfoSchema,
  ),
} as const;

/** Contents a sweep asks about at once: one listing page of the object store (R2 and S3 list at most 1,000 keys). */
export const MAX_SWEEP_PAGE = 1000;

/** Calls a store's family object makes to its readers' objects while it sweeps (workspace/family-sweep.ts). */
const sharedStoreCalls = {
  /** Which of `hashes` the reader's database needs; it records the rest of `doom` as doomed in `round`. */
  sharedStoreCheck: objectCall(
    'shared-store-check',
    z.strictObject({
      store: z.string(),
      uid: z.string(),
      round: z.number().int().min(1),
      hashes: z.array(blobId).max(MAX_SWEEP_PAGE),
      doom: z.array(blobId).max(MAX_SWEEP_PAGE),
    }),
    z.strictObject({ reader: z.enum(['reading', 'receiving', 'absent']), needed: z.array(blobId) }),
  ),
  /** The round is over for these contents. */
  sharedStoreRelease: objectCall(
    'shared-store-release',
    z.strictObject({ store: z.string(), hashes: z.array(blobId).max(MAX_SWEEP_PAGE) }),
    null,
  ),
} as const;

export const workspaceCalls = {
  /** A key this object may hold a copy of was revoked or changed: the copy is dropped before this answers. */
  keyChanged: objectCall('key-changed', z.strictObject({ id: keyId }), null),
  /** The usage totals of the calls recorded in this object. */
  usage: objectCall('usage', usageQuerySchema, z.array(usageRowSchema)),
  /** Sends the key object `watcher` this object's approvals' changes for the next `ms` (its approvals streams are open). */
  watchApprovals: objectCall(
    'watch-approvals',
    z.strictObject({ watcher: keyId, ms: z.number().int().min(1).max(600_000) }),
    null,
  ),
  /** The approvals of this object the key may see, newest first. */
  approvals: objectCall(
    'approvals',
    z.strictObject({ key: storedKeySchema, status: approvalStatusSchema.optional(), limit: count }),
    z.array(storedApprovalSchema),
  ),
  /**
   * Leases an offered job to a runner: the job, `later` when it must wait (its workspace runs its
   * most processes, or it is a start and the runner takes execs only), or none (204) when it no longer waits.
   */
  leaseJob: objectCall(
    'lease-job',
    z.strictObject({
      jobId: z.string(),
      runnerId: z.string(),
      holder: leaseHolderSchema,
      wish: z.object({ execOnly: z.boolean().optional() }).optional(),
      /** The dispatcher shard asking: the workspace's next jobs are offered there first. */
      shard: z.number().int().min(0).max(1023).optional(),
    }),
    z.looseObject({ job: leasedJobSchema.optional(), later: z.boolean().optional() }),
  ),
  /** Whether a job still waits for a runner: a dispatcher shard drops an offer it holds of one that does not. */
  jobWaits: objectCall('job-waits', z.strictObject({ jobId: z.string() }), z.looseObject({ waits: z.boolean() })),
  ...forkCalls,
  ...sharedStoreCalls,
} as const;

/**
 * A webhook delivery the directory verified, sent to the hook's workspace object: this travels as
 * JSON in a header (the hook, and the sender's delivery id), the body being the delivery's raw body.
 */
export const forwardedDeliverySchema = z.strictObject({ hook: hookTargetSchema, deliveryId: z.string().optional() });
export type ForwardedDelivery = z.input<typeof forwardedDeliverySchema>;

// Calls to a store's family object (workspace/store-families.ts): who reads a store that forks in several objects share.

/** A reader of a shared store: a workspace incarnation and the name of the object holding it. */
const storeReaderSchema = z.strictObject({ uid: z.string(), workspace: z.string() });

export const storeFamilyCalls = {
  /** Adds readers before a fork across objects reads what it sends; `conflict` once the store is being deleted. */
  join: objectCall(
    'family-join',
    z.strictObject({ store: z.string(), readers: z.array(storeReaderSchema).min(1) }),
    null,
  ),
  /** Removes a reader (by uid); the last to leave has the store deleted. */
  leave: objectCall('family-leave', z.strictObject({ store: z.string(), reader: z.string() }), null),
  /** What a reader refers to changed: a sweep is planned. */
  changed: objectCall('family-changed', z.strictObject({ store: z.string() }), null),
  /** A reader is about to name a doomed content: answered once it is kept, or once its delete has landed. */
  rescue: objectCall('family-rescue', z.strictObject({ store: z.string(), hash: blobId }), null),
} as const;

// Calls to the dispatcher.

/** A job waiting in a workspace object: what the Queue carries, and what the dispatcher is offered. */
export const jobMessageSchema = z.strictObject({
  workspace: z.string(),
  jobId: z.string(),
  /** The dispatcher shard that leased the workspace's last job: offered there first, where a runner likely waits. */
  shard: z.number().int().min(0).max(1023).optional(),
});
export type JobMessage = z.output<typeof jobMessageSchema>;

export const dispatcherCalls = {
  /**
   * Offers a job to the runners that lease from this shard (a job offered twice is held once):
   * `claimed` once a runner waiting here took it (or found it gone, or to wait for a slot), false
   * when none waits here or none took it soon, so the next shard is offered it too.
   */
  offer: objectCall('offer', jobMessageSchema, z.looseObject({ claimed: z.boolean() })),
  /** A runner key this shard may hold a copy of was revoked or changed: the copy is dropped before this answers. */
  keyChanged: objectCall('dispatcher-key-changed', z.strictObject({ id: keyId }), null),
} as const;

// The calls between the Cloudflare home's objects (src/contract/object-calls.ts): each call takes the
// body its caller sends, as it goes over the wire, and refuses a malformed one naming the field;
// each answer reads back what the receiving object sends.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { Approval } from '../../src/approvals/approval-store.ts';
import {
  directoryCalls,
  dispatcherCalls,
  forwardedDeliverySchema,
  keyCalls,
  storeFamilyCalls,
  workspaceCalls,
  type ObjectCall,
} from '../../src/contract/object-calls.ts';
import { parseInput } from '../../src/contract/parse-input.ts';
import { ToolError } from '../../src/core/errors.ts';
import type { ApiKey } from '../../src/keys/key-store.ts';

/** A key as the directory's store gives it: the fields it does not hold are undefined. */
const key: ApiKey = {
  id: 'key_1',
  name: 'agent',
  role: 'agent',
  workspaces: ['alpha'],
  tools: undefined,
  approvalMode: 'safe',
  rules: [{ tool: 'bash', action: 'exec', decision: 'approve' }],
  quota: undefined,
  rateLimitPerMinute: undefined,
  notifyUrl: undefined,
  createdAt: '2026-01-01T00:00:00.000Z',
};
const limitedKey: ApiKey = {
  ...key,
  tools: ['read_file'],
  quota: { calls: 10, period: 'day' },
  rateLimitPerMinute: 60,
  notifyUrl: 'https://example.test/notify',
};

const approval: Approval = {
  id: 'apr_1.alpha',
  status: 'rejected',
  tool: 'bash',
  action: 'exec',
  arguments: { action: 'exec', command: 'ls' },
  workspace: 'alpha',
  keyId: 'key_1',
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T01:00:00.000Z',
  decidedAt: '2026-01-01T00:10:00.000Z',
  decidedBy: 'key_admin',
  reason: undefined,
  result: undefined,
  error: { code: 'interrupted', message: 'The server stopped.' },
  usageId: 7,
  bytesIn: 120,
};

/** A value as it crosses: JSON, which leaves out undefined fields. */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

/** Each call: a body its caller sends, and malformed ones with the field the refusal names. */
const bodies: { call: ObjectCall; good: unknown[]; bad: { body: unknown; field: string }[] }[] = [
  {
    call: keyCalls.authenticate,
    good: [
      { id: 'key_1', secret: 'tg_secret', watcher: 'alpha' },
      { id: 'key_1', secret: 'tg_secret' },
    ],
    bad: [
      { body: { id: 'key_1' }, field: 'secret' },
      { body: { id: 'key_1', secret: 1 }, field: 'secret' },
      { body: { secret: 'tg_secret' }, field: 'id' },
      { body: { id: 'key_1', secret: 'x'.repeat(513) }, field: 'secret' },
    ],
  },
  { call: keyCalls.key, good: [{ id: 'key_1', watcher: 'alpha' }], bad: [{ body: { id: null }, field: 'id' }] },
  { call: keyCalls.notifySecret, good: [{ id: 'key_1' }], bad: [{ body: { id: 'key_1', x: 1 }, field: '' }] },
  {
    call: keyCalls.create,
    good: [{ id: 'key_1', secret: 'tg_secret', input: { name: 'agent', role: 'agent', workspaces: ['alpha'] } }],
    bad: [
      {
        body: { id: 'key_1', secret: 'tg_secret', input: { name: 'agent', role: 'root', workspaces: ['alpha'] } },
        field: 'input.role',
      },
      {
        body: { id: 'key_1', secret: '', input: { name: 'agent', role: 'agent', workspaces: ['alpha'] } },
        field: 'secret',
      },
    ],
  },
  { call: keyCalls.revoke, good: [{ id: 'key_1' }], bad: [{ body: { id: '' }, field: 'id' }] },
  {
    call: keyCalls.admit,
    good: [
      { id: 'key_1', watcher: 'alpha', perMinute: 60, quota: true, usesProcessTime: false },
      { id: 'key_1', perMinute: 0, quota: true, usesProcessTime: true },
    ],
    bad: [
      { body: { id: 'key_1', perMinute: '60', quota: false, usesProcessTime: false }, field: 'perMinute' },
      { body: { id: 'key_1', perMinute: -1, quota: false, usesProcessTime: false }, field: 'perMinute' },
      { body: { id: 'key_1', perMinute: 0, usesProcessTime: false }, field: 'quota' },
      { body: { id: 'key_1', perMinute: 0, quota: true }, field: 'usesProcessTime' },
    ],
  },
  {
    call: keyCalls.quotaSpent,
    good: [{ key: limitedKey }],
    bad: [{ body: { key: { ...limitedKey, quota: { calls: 1, period: 'week' } } }, field: 'key.quota.period' }],
  },
  {
    call: keyCalls.quotaSeconds,
    good: [{ id: 'key_1', startedAt: 1_767_225_600_000, seconds: 1.5 }],
    bad: [{ body: { id: 'key_1', startedAt: 1_767_225_600_000, seconds: -1 }, field: 'seconds' }],
  },
  { call: workspaceCalls.keyChanged, good: [{ id: 'key_1' }], bad: [{ body: {}, field: 'id' }] },
  { call: workspaceCalls.jobWaits, good: [{ jobId: 'proc_1' }], bad: [{ body: { jobId: 7 }, field: 'jobId' }] },
  { call: dispatcherCalls.keyChanged, good: [{ id: 'key_1' }], bad: [{ body: { id: 1 }, field: 'id' }] },
  {
    call: dispatcherCalls.offer,
    good: [{ workspace: 'alpha', jobId: 'proc_1', shard: 3 }],
    bad: [{ body: { workspace: 'alpha', jobId: 'proc_1', shard: -1 }, field: 'shard' }],
  },
  {
    call: directoryCalls.register,
    good: [{ workspace: 'alpha' }],
    bad: [{ body: { workspace: 42 }, field: 'workspace' }],
  },
  { call: directoryCalls.workspaces, good: [{}], bad: [{ body: { scope: ['*'] }, field: '' }] },
  {
    call: workspaceCalls.watchApprovals,
    good: [{ watcher: 'key_1', ms: 60_000 }],
    bad: [
      { body: { watcher: '', ms: 60_000 }, field: 'watcher' },
      { body: { watcher: 'key_1', ms: 0 }, field: 'ms' },
      { body: { watcher: 'key_1', ms: 3_600_000 }, field: 'ms' },
    ],
  },
  {
    call: keyCalls.approvalChanged,
    good: [{ approval }, { approval: { ...approval, status: 'pending', decidedAt: undefined, error: undefined } }],
    bad: [
      { body: { approval: { ...approval, status: 'lost' } }, field: 'approval.status' },
      { body: { approval: { ...approval, keyId: undefined } }, field: 'approval.keyId' },
    ],
  },
  {
    call: workspaceCalls.usage,
    good: [
      { from: 0, to: Number.MAX_SAFE_INTEGER, groupBy: 'tool', keyId: 'key_1', workspaces: ['*'] },
      { from: 0, to: 10, groupBy: 'workspace', keyId: undefined, workspaces: ['alpha'] },
    ],
    bad: [{ body: { from: 0, to: 10, groupBy: 'day' }, field: 'groupBy' }],
  },
  {
    call: workspaceCalls.approvals,
    good: [
      { key, status: undefined, limit: 100 },
      { key, status: 'pending', limit: 1 },
    ],
    bad: [{ body: { key, status: 'expired', limit: 100 }, field: 'status' }],
  },
  {
    call: workspaceCalls.leaseJob,
    good: [
      { jobId: 'job_1', runnerId: 'runner', holder: { keyId: 'key_runner', workspaces: ['*'] }, wish: {} },
      {
        jobId: 'job_1',
        runnerId: 'runner',
        holder: { keyId: 'key_runner', workspaces: ['alpha'] },
        wish: { execOnly: true },
      },
    ],
    bad: [
      { body: { jobId: 'job_1', runnerId: 'runner', holder: { keyId: 'key_runner' } }, field: 'holder.workspaces' },
    ],
  },
  {
    call: workspaceCalls.forkBegin,
    good: [{ to: 'beta', uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e', store: 'a1b2c3' }],
    bad: [
      { body: { to: 'beta', uid: 'not-a-uid', store: 'a1b2c3' }, field: 'uid' },
      { body: { to: 'beta', uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e' }, field: 'store' },
    ],
  },
  {
    call: storeFamilyCalls.join,
    good: [
      {
        store: 'a1b2c3',
        readers: [
          { uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e', workspace: 'alpha' },
          { uid: 'u-2', workspace: 'beta' },
        ],
      },
    ],
    bad: [
      { body: { store: 'a1b2c3', readers: [] }, field: 'readers' },
      { body: { store: 'a1b2c3', readers: ['u-1'] }, field: 'readers.0' },
      { body: { readers: [{ uid: 'u-1', workspace: 'alpha' }] }, field: 'store' },
    ],
  },
  {
    call: storeFamilyCalls.changed,
    good: [{ store: 'a1b2c3' }],
    bad: [{ body: {}, field: 'store' }],
  },
  {
    call: storeFamilyCalls.rescue,
    good: [{ store: 'a1b2c3', hash: 'ab'.repeat(32) }],
    bad: [{ body: { store: 'a1b2c3', hash: '../x' }, field: 'hash' }],
  },
  {
    call: workspaceCalls.sharedStoreCheck,
    good: [{ store: 'a1b2c3', uid: 'u-1', round: 3, hashes: ['ab'.repeat(32)], doom: [] }],
    bad: [
      { body: { store: 'a1b2c3', uid: 'u-1', round: 0, hashes: [], doom: [] }, field: 'round' },
      {
        body: { store: 'a1b2c3', uid: 'u-1', round: 1, hashes: Array(1001).fill('ab'.repeat(32)), doom: [] },
        field: 'hashes',
      },
    ],
  },
  {
    call: workspaceCalls.sharedStoreRelease,
    good: [{ store: 'a1b2c3', hashes: ['ab'.repeat(32)] }],
    bad: [{ body: { store: 'a1b2c3', hashes: ['AB'] }, field: 'hashes.0' }],
  },
  {
    call: storeFamilyCalls.leave,
    good: [{ store: 'a1b2c3', reader: 'u-1' }],
    bad: [{ body: { store: 'a1b2c3', reader: 7 }, field: 'reader' }],
  },
  {
    call: workspaceCalls.forkEntries,
    good: [
      {
        uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e',
        entries: [
          { path: 'd', parent: '', type: 'dir', blob: null, target: null, size: 0, version: 1 },
          { path: 'd/f', parent: 'd', type: 'file', blob: 'a'.repeat(64), target: null, size: 3, version: 2 },
          { path: 'l', parent: '', type: 'symlink', blob: null, target: 'd/f', size: 0, version: 2 },
        ],
      },
    ],
    bad: [
      {
        body: { uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e', entries: [{ path: 'd', type: 'dir' }] },
        field: 'entries.0.parent',
      },
    ],
  },
  {
    call: workspaceCalls.forkHistory,
    good: [
      {
        uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e',
        gitFiles: [{ path: 'HEAD', contentBase64: 'cmVmOiByZWZzL2hlYWRzL21haW4K' }],
        gitBlobs: [{ sha256: 'a'.repeat(64), oid: 'b'.repeat(40), size: 3 }],
        checkpoints: [{ seq: 1, id: 'b'.repeat(40), message: 'first', createdAt: '2026-01-01T00:00:00.000Z' }],
      },
    ],
    bad: [
      {
        body: {
          uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e',
          gitFiles: [],
          gitBlobs: [{ sha256: 'a' }],
          checkpoints: [],
        },
        field: 'gitBlobs.0.oid',
      },
    ],
  },
  {
    call: workspaceCalls.forkFinish,
    good: [
      {
        to: 'beta',
        uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e',
        workspace: { store: 'store-1', settings: '{}', version: 3, files: 1, bytes: 3 },
      },
    ],
    bad: [
      {
        body: {
          to: 'beta',
          uid: '0b7c7d4e-6a1f-4f57-9d0e-2f8c1b3a4d5e',
          workspace: { store: 'store-1', settings: '{}', version: -1, files: 1, bytes: 3 },
        },
        field: 'workspace.version',
      },
    ],
  },
  {
    call: dispatcherCalls.offer,
    good: [{ workspace: 'alpha', jobId: 'job_1' }],
    bad: [{ body: { workspace: 'alpha' }, field: 'jobId' }],
  },
];

function refusal(schema: z.ZodType, value: unknown): ToolError {
  try {
    parseInput(schema, value, 'body');
  } catch (error) {
    return error as ToolError;
  }
  throw new Error(`${JSON.stringify(value)} was taken`);
}

describe('the calls between objects', () => {
  it('names every call by a path of its own', () => {
    const paths = [keyCalls, directoryCalls, workspaceCalls, dispatcherCalls, storeFamilyCalls].flatMap((table) =>
      Object.values(table).map((call: ObjectCall) => call.path),
    );
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).toEqual([
      'key/authenticate',
      'key/get',
      'key/notify-secret',
      'key/create',
      'key/revoke',
      'key/admit',
      'key/approval-changed',
      'key/quota-spent',
      'key/quota-seconds',
      'register',
      'workspaces',
      'key-changed',
      'usage',
      'watch-approvals',
      'approvals',
      'lease-job',
      'job-waits',
      'fork-begin',
      'fork-entries',
      'fork-history',
      'fork-finish',
      'shared-store-check',
      'shared-store-release',
      'offer',
      'dispatcher-key-changed',
      'family-join',
      'family-leave',
      'family-changed',
      'family-rescue',
    ]);
  });

  for (const { call, good, bad } of bodies) {
    it(`${call.path}: takes the body its caller sends, unchanged on the wire`, () => {
      for (const body of good) {
        const parsed = parseInput(call.body, wire(body), 'body');
        expect(wire(parsed)).toEqual(wire(body));
      }
    });

    it(`${call.path}: refuses a malformed body with invalid_argument naming the field`, () => {
      for (const { body, field } of bad) {
        const error = refusal(call.body, body);
        expect(error).toBeInstanceOf(ToolError);
        expect(error.code).toBe('invalid_argument');
        expect((error.details as { issues: { path: string }[] }).issues.map((issue) => issue.path)).toContain(field);
      }
    });
  }

  it('reads a key back with the fields JSON left out, as the store gives it', () => {
    for (const each of [key, limitedKey]) {
      const answer = keyCalls.authenticate.answer.parse(wire(each));
      expect(answer).toStrictEqual(each);
      // The order of the fields is kept, so a key sent on again is the same JSON.
      expect(JSON.stringify(answer)).toBe(JSON.stringify(each));
    }
    expect(keyCalls.key.answer.safeParse({ ...(wire(key) as object), workspaces: 'alpha' }).success).toBe(false);
  });

  it('reads the other answers back', () => {
    expect(keyCalls.notifySecret.answer.parse({ secret: null })).toEqual({ secret: null });
    expect(keyCalls.notifySecret.answer.safeParse({}).success).toBe(false);
    expect(keyCalls.quotaSpent.answer.parse({ spent: true })).toEqual({ spent: true });
    expect(keyCalls.quotaSpent.answer.safeParse({ spent: 'no' }).success).toBe(false);
    expect(keyCalls.revoke.answer.parse({ revoked: true })).toEqual({ revoked: true });
    expect(dispatcherCalls.offer.answer.parse({ claimed: false })).toEqual({ claimed: false });
    expect(dispatcherCalls.offer.answer.safeParse({}).success).toBe(false);
    expect(keyCalls.create.answer.parse(wire({ key, notifySecret: null }))).toStrictEqual({ key, notifySecret: null });
    const row = { group: 'read_file', calls: 2, errors: 0, bytesIn: 10, bytesOut: 20, processSeconds: 0 };
    expect(workspaceCalls.usage.answer.parse([row])).toEqual([row]);
    expect(workspaceCalls.usage.answer.safeParse([{ ...row, calls: -1 }]).success).toBe(false);
    expect(workspaceCalls.approvals.answer.parse(wire([approval]))).toStrictEqual([approval]);
    expect(workspaceCalls.approvals.answer.safeParse([{ ...approval, status: 'lost' }]).success).toBe(false);
    expect(directoryCalls.workspaces.answer.parse({ names: ['alpha'] })).toEqual({ names: ['alpha'] });
    expect(keyCalls.approvalChanged.answer.safeParse({ watching: 'yes' }).success).toBe(false);
    expect(workspaceCalls.leaseJob.answer.parse({ later: true })).toEqual({ later: true });
    expect(workspaceCalls.leaseJob.answer.safeParse({ job: { processId: 'p' } }).success).toBe(false);
  });

  it('reads the forwarded hook delivery', () => {
    const hook = { id: 'hook_1', workspace: 'alpha', ownerKeyId: 'key_admin', checkpoint: false };
    expect(forwardedDeliverySchema.parse(wire({ hook, deliveryId: undefined }))).toEqual({ hook });
    expect(forwardedDeliverySchema.parse({ hook, deliveryId: 'd1' })).toEqual({ hook, deliveryId: 'd1' });
    const error = refusal(forwardedDeliverySchema, { hook: { ...hook, checkpoint: 'yes' } });
    expect(error.code).toBe('invalid_argument');
  });
});

// The calls between the Cloudflare home's objects in workerd, made from inside as the objects make
// them: a malformed body is refused with invalid_argument naming the field and changes nothing,
// and an answer that does not fit the call's declaration is `unavailable` at the caller.

import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  callObject,
  directoryObject,
  dispatcherObject,
  INTERNAL_HEADER,
  INTERNAL_PREFIX,
  keyObject,
  workspaceObject,
  type DurableObjectStub,
} from '../../src/cloudflare/bindings.ts';
import { HOOK_DELIVERY_HEADER, HOOK_DELIVERY_PATH } from '../../src/cloudflare/hook-delivery-route.ts';
import { directoryCalls, keyCalls } from '../../src/contract/object-calls.ts';
import { ToolError } from '../../src/core/errors.ts';

const bindings = env as never;

/** An internal call as an object sends it, with any body and headers. */
async function internalCall(
  stub: DurableObjectStub,
  path: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: any }> {
  const response = await stub.fetch(
    new Request(`https://toolgate.internal${INTERNAL_PREFIX}${path}`, {
      method: 'POST',
      headers: { ...headers, [INTERNAL_HEADER]: '1' },
      body,
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

function expectRefusal(answer: { status: number; body: any }, field: string): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error.code).toBe('invalid_argument');
  expect(answer.body.error.details.issues.map((issue: { path: string }) => issue.path)).toContain(field);
}

/** Rows of a table in an object's storage that match a condition. */
function count(
  namespace: 'DIRECTORY' | 'DISPATCHER' | 'KEYS',
  name: string,
  sql: string,
  ...params: string[]
): Promise<number> {
  const binding = (env as unknown as Record<string, typeof env.DIRECTORY>)[namespace]!;
  return runInDurableObject(binding.get(binding.idFromName(name)), (_instance, state) =>
    Number(
      state.storage.sql
        .exec(sql, ...params)
        .toArray()
        .map((row) => row.n)[0],
    ),
  );
}

describe('calls between objects', () => {
  it('refuses a malformed body with invalid_argument, and changes nothing', async () => {
    const directory = directoryObject(bindings);
    expectRefusal(await internalCall(directory, 'register', JSON.stringify({ workspace: 42 })), 'workspace');
    expectRefusal(
      await internalCall(directory, 'register', JSON.stringify({ workspace: 'malformed-extra', extra: 1 })),
      '',
    );
    const indexed = "SELECT COUNT(*) AS n FROM workspace_objects WHERE name LIKE 'malformed%'";
    expect(await count('DIRECTORY', 'directory', indexed)).toBe(0);

    const seconds = { id: 'key_malformed', startedAt: Date.now(), seconds: 3 };
    const keyStub = keyObject(bindings, 'key_malformed');
    expectRefusal(
      await internalCall(keyStub, 'key/quota-seconds', JSON.stringify({ ...seconds, startedAt: 'now' })),
      'startedAt',
    );
    // The same call, well formed, is counted.
    expect(await callObject(keyStub, keyCalls.quotaSeconds, seconds)).toBeUndefined();
    const counted = 'SELECT COUNT(*) AS n FROM quota_seconds WHERE key_id = ?';
    expect(await count('KEYS', 'key_malformed', counted, 'key_malformed')).toBe(1);
    // A key created with a secret that is not its own is refused, and the object holds no key.
    const creation = {
      id: 'key_malformed',
      secret: 'tg_other',
      input: { name: 'x', role: 'agent', workspaces: ['*'] },
    };
    const wrongSecret = await callObject(keyStub, keyCalls.create, creation as never).catch((error: unknown) => error);
    expect((wrongSecret as ToolError).code).toBe('invalid_argument');
    expect(await callObject(keyStub, keyCalls.key, { id: 'key_malformed' })).toBeUndefined();

    expectRefusal(
      await internalCall(dispatcherObject(bindings, 0), 'offer', JSON.stringify({ workspace: 'malformed' })),
      'jobId',
    );
    const offered = "SELECT COUNT(*) AS n FROM job_offers WHERE workspace = 'malformed'";
    expect(await count('DISPATCHER', 'dispatcher', offered)).toBe(0);

    const workspace = workspaceObject(bindings, 'malformed');
    expectRefusal(
      await internalCall(workspace, 'lease-job', JSON.stringify({ jobId: 'proc_x', runnerId: 'r' })),
      'holder',
    );
    const hookHeaders = (header: string) => ({ 'content-type': 'application/json', [HOOK_DELIVERY_HEADER]: header });
    const delivery = JSON.stringify({ patch: '' });
    expectRefusal(
      await internalCall(
        workspace,
        HOOK_DELIVERY_PATH,
        delivery,
        hookHeaders(JSON.stringify({ hook: { id: 'h', workspace: 'malformed', checkpoint: false } })),
      ),
      'hook.ownerKeyId',
    );
    const notJson = await internalCall(workspace, HOOK_DELIVERY_PATH, delivery, hookHeaders('{'));
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_argument');
  });

  it('hands the caller the refusal as the contract error it is', async () => {
    const refused = await callObject(directoryObject(bindings), directoryCalls.register, {
      workspace: 42,
    } as never).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ToolError);
    expect((refused as ToolError).code).toBe('invalid_argument');
  });

  it('reads each answer with its declaration: one that does not fit is unavailable', async () => {
    const admin = await callObject(keyObject(bindings, 'key_bootstrap_admin'), keyCalls.key, {
      id: 'key_bootstrap_admin',
    });
    expect(admin).toMatchObject({ id: 'key_bootstrap_admin', role: 'admin' });
    expect(await callObject(keyObject(bindings, 'key_none'), keyCalls.key, { id: 'key_none' })).toBeUndefined();
    // A caller that expects another answer from the same path, as a version apart would.
    const drifted = { ...keyCalls.key, answer: z.looseObject({ keyId: z.string() }) };
    const failure = await callObject(keyObject(bindings, 'key_bootstrap_admin'), drifted, {
      id: 'key_bootstrap_admin',
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolError);
    expect((failure as ToolError).code).toBe('unavailable');
    expect((failure as ToolError).message).toContain('keyId');
  });
});

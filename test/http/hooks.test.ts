// docs/api.md Webhooks over real HTTP: configuring hooks (admin), signed deliveries applied as the
// hook's owner key (metered under it, under its approval policy, through the path guard),
// refusals that apply nothing, replays that apply once, the timestamp window (required by
// requireTimestamp hooks) and the body limit.
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hookDeliveryAnswerSchema, hookSchema } from '../../src/contract/http-answers.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { callApi, useServer, type ApiAnswer } from '../support/server-process.ts';

const MAX_BODY = 4096;
const server = useServer({ env: { TOOLGATE_MAX_BODY_BYTES: String(MAX_BODY) } });

const WS = 'hooked';
const SECRET = 'a hook secret that senders share';
let owner: TestKey;

const envelope = (...lines: string[]) => `*** Begin Patch\n${lines.join('\n')}\n*** End Patch\n`;
const sign = (body: string, secret = SECRET, timestamp?: string) =>
  `sha256=${createHmac('sha256', secret)
    .update(timestamp === undefined ? body : `${timestamp}.${body}`)
    .digest('hex')}`;
const read = async (path: string) => (await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path })).body;
const now = () => String(Math.floor(Date.now() / 1000));

/** Sends a delivery without an API key: the signature alone authenticates it. */
function deliver(hookId: string, body: string, headers: Record<string, string> = {}): Promise<ApiAnswer> {
  return callApi(server.url, undefined, 'POST', `/v1/hooks/${hookId}`, body, {
    'content-type': 'application/json',
    ...headers,
  });
}

function signed(hookId: string, payload: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
  const body = JSON.stringify(payload);
  return deliver(hookId, body, { 'x-hub-signature-256': sign(body), ...headers });
}

async function usageOf(keyId: string): Promise<{ calls: number; errors: number }> {
  const answer = await server.call('GET', '/v1/usage?groupBy=key');
  const row = (answer.body.rows as { group: string; calls: number; errors: number }[]).find(
    (entry) => entry.group === keyId,
  );
  return { calls: row?.calls ?? 0, errors: row?.errors ?? 0 };
}

beforeAll(async () => {
  expect((await server.call('PUT', `/v1/workspaces/${WS}`)).status).toBe(201);
  owner = await createKey(server, { name: 'hook owner', role: 'admin', workspaces: ['*'] });
  const configured = await owner.call('PUT', '/v1/hooks/ci', { secret: SECRET, workspace: WS });
  expect(configured.status, JSON.stringify(configured.body)).toBe(201);
});

describe('PUT /v1/hooks/{hookId}', () => {
  it('configures a hook (201), replaces it (200, same createdAt) and never shows the secret', async () => {
    const created = await owner.call('PUT', '/v1/hooks/conf', { secret: SECRET, workspace: WS });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'conf',
      workspace: WS,
      checkpoint: false,
      requireTimestamp: false,
      createdAt: expect.any(String),
    });
    expect(hookSchema.safeParse(created.body).success).toBe(true);
    const replaced = await owner.call('PUT', '/v1/hooks/conf', {
      secret: `${SECRET} 2`,
      workspace: 'elsewhere',
      checkpoint: false,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      id: 'conf',
      workspace: 'elsewhere',
      checkpoint: false,
      requireTimestamp: false,
      createdAt: created.body.createdAt,
    });
    expect(JSON.stringify(replaced.body)).not.toContain(SECRET);
  });

  it('refuses a bad id, a short secret, an unknown field; needs an admin key (403) and a key at all (401)', async () => {
    expect((await owner.call('PUT', '/v1/hooks/Bad!', { secret: SECRET, workspace: WS })).body.error.code).toBe(
      'invalid_argument',
    );
    expect((await owner.call('PUT', '/v1/hooks/h', { secret: 'short', workspace: WS })).status).toBe(400);
    expect((await owner.call('PUT', '/v1/hooks/h', { secret: SECRET, workspace: WS, events: ['push'] })).status).toBe(
      400,
    );
    expect(
      (await owner.call('PUT', '/v1/hooks/h', { secret: SECRET, workspace: WS, requireTimestamp: 'yes' })).status,
    ).toBe(400);
    const agent = await createKey(server, { role: 'agent', workspaces: ['*'], approvalMode: 'auto' });
    const refused = await agent.call('PUT', '/v1/hooks/h', { secret: SECRET, workspace: WS });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect((await callApi(server.url, undefined, 'PUT', '/v1/hooks/h', { secret: SECRET, workspace: WS })).status).toBe(
      401,
    );
    // An admin key limited to other workspaces cannot point a hook at this one.
    const narrow = await createKey(server, { role: 'admin', workspaces: ['elsewhere'] });
    expect((await narrow.call('PUT', '/v1/hooks/h', { secret: SECRET, workspace: WS })).status).toBe(404);
  });
});

describe('GET and DELETE /v1/hooks', () => {
  it('lists and reads hooks without their secrets, only those of workspaces the admin key sees; deleting one refuses its deliveries', async () => {
    expect((await owner.call('PUT', '/v1/hooks/gone', { secret: SECRET, workspace: WS })).status).toBe(201);
    const listed = await owner.call('GET', '/v1/hooks');
    expect(listed.status).toBe(200);
    expect(listed.body.hooks).toContainEqual({
      id: 'gone',
      workspace: WS,
      checkpoint: false,
      requireTimestamp: false,
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    expect((await owner.call('GET', '/v1/hooks/gone')).body).toMatchObject({ id: 'gone', workspace: WS });
    // An admin key limited to other workspaces sees none of this workspace's hooks.
    const narrow = await createKey(server, { role: 'admin', workspaces: ['elsewhere'] });
    expect((await narrow.call('GET', '/v1/hooks')).body.hooks.map((hook: { id: string }) => hook.id)).not.toContain(
      'gone',
    );
    expect((await narrow.call('GET', '/v1/hooks/gone')).status).toBe(404);
    expect((await narrow.call('DELETE', '/v1/hooks/gone')).status).toBe(404);
    const agent = await createKey(server, { role: 'agent', workspaces: ['*'], approvalMode: 'auto' });
    expect((await agent.call('GET', '/v1/hooks')).status).toBe(403);

    expect((await signed('gone', { patch: envelope('*** Add File: gone-before.txt', '+x') })).status).toBe(200);
    expect((await owner.call('DELETE', '/v1/hooks/gone')).status).toBe(204);
    expect((await owner.call('GET', '/v1/hooks/gone')).status).toBe(404);
    expect((await owner.call('DELETE', '/v1/hooks/gone')).status).toBe(404);
    const after = await signed('gone', { patch: envelope('*** Add File: gone-after.txt', '+x') });
    expect(after.status).toBe(401);
    expect((await read('gone-after.txt')).error.code).toBe('not_found');
  });
});

describe('POST /v1/hooks/{hookId}', () => {
  it("applies a signed patch as apply_patch does, metered under the owner key, with GitHub's header or ours", async () => {
    const before = await usageOf(owner.id);
    const applied = await signed('ci', {
      patch: envelope('*** Add File: src/hello.txt', '+hello'),
      commitMessage: 'from CI',
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.result).toMatchObject({
      summary: 'A src/hello.txt',
      files: [{ path: 'src/hello.txt', action: 'add' }],
    });
    expect(hookDeliveryAnswerSchema.safeParse(applied.body).success).toBe(true);
    expect((await read('src/hello.txt')).result.content).toBe('hello\n');
    expect(await usageOf(owner.id)).toEqual({ calls: before.calls + 1, errors: before.errors });

    const body = JSON.stringify({ patch: envelope('*** Update File: src/hello.txt', '@@', '-hello', '+hello, world') });
    const timestamp = now();
    const ours = await deliver('ci', body, {
      'x-toolgate-signature-256': sign(body, SECRET, timestamp),
      'x-toolgate-timestamp': timestamp,
    });
    expect(ours.status, JSON.stringify(ours.body)).toBe(200);
    expect((await read('src/hello.txt')).result.content).toBe('hello, world\n');
  });

  it('refuses a bad or missing signature, an unknown hook and a stale timestamp with 401, applying nothing', async () => {
    const body = JSON.stringify({ patch: envelope('*** Add File: refused.txt', '+no') });
    const before = await usageOf(owner.id);
    const answers = {
      missing: await deliver('ci', body),
      otherSecret: await deliver('ci', body, { 'x-hub-signature-256': sign(body, 'not the secret of this hook') }),
      otherBody: await deliver('ci', body, { 'x-hub-signature-256': sign(`${body} `) }),
      unknownHook: await deliver('nope', body, { 'x-hub-signature-256': sign(body) }),
      badHookId: await deliver('NOPE!', body, { 'x-hub-signature-256': sign(body) }),
      withKeyOnly: await callApi(server.url, server.key, 'POST', '/v1/hooks/ci', body, {
        'content-type': 'application/json',
      }),
      stale: await deliver('ci', body, {
        'x-hub-signature-256': sign(body, SECRET, String(Number(now()) - 301)),
        'x-toolgate-timestamp': String(Number(now()) - 301),
      }),
      future: await deliver('ci', body, {
        'x-hub-signature-256': sign(body, SECRET, String(Number(now()) + 400)),
        'x-toolgate-timestamp': String(Number(now()) + 400),
      }),
      // A fresh timestamp on a delivery signed without one: the timestamp is part of what is signed.
      unsignedTimestamp: await deliver('ci', body, {
        'x-hub-signature-256': sign(body),
        'x-toolgate-timestamp': now(),
      }),
    };
    for (const [name, answer] of Object.entries(answers))
      expect({ name, status: answer.status, code: answer.body.error?.code }).toEqual({
        name,
        status: 401,
        code: 'unauthorized',
      });
    // An unknown hook cannot be told from a known one with a wrong signature.
    expect(answers.unknownHook.body).toEqual(answers.otherSecret.body);
    expect(answers.badHookId.body).toEqual(answers.otherSecret.body);
    expect((await read('refused.txt')).error.code).toBe('not_found');
    expect(await usageOf(owner.id)).toEqual(before);
  });

  it('applies 100 concurrent replays of one delivery once, and all answer identically', async () => {
    await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'counter.txt', content: 'start\n' });
    const before = await usageOf(owner.id);
    const payload = { patch: envelope('*** Update File: counter.txt', '@@', ' start', '+tick') };
    const answers = await Promise.all(
      Array.from({ length: 100 }, () =>
        signed('ci', payload, { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' }),
      ),
    );
    expect(new Set(answers.map((answer) => `${answer.status} ${JSON.stringify(answer.body)}`)).size).toBe(1);
    expect(answers[0]!.status).toBe(200);
    expect((await read('counter.txt')).result.content).toBe('start\ntick\n');
    expect((await usageOf(owner.id)).calls).toBe(before.calls + 1);
    // Later, with our header name as well: still the first answer, still applied once.
    const later = await signed('ci', payload, { 'x-delivery-id': '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    expect({ status: later.status, body: later.body }).toEqual({ status: answers[0]!.status, body: answers[0]!.body });
    expect(later.headers.get('x-toolgate-replayed')).toBe('true');
    expect((await read('counter.txt')).result.content).toBe('start\ntick\n');
    // A failed first delivery is replayed as failed, even once it could apply.
    const conflict = { patch: envelope('*** Update File: counter.txt', '@@', '-missing line', '+x') };
    const failed = await signed('ci', conflict, { 'x-delivery-id': 'failing-1' });
    expect(failed.status).toBe(409);
    expect((await signed('ci', conflict, { 'x-delivery-id': 'failing-1' })).body).toEqual(failed.body);
  });

  it("answers a path escape with the path guard's error, applying nothing", async () => {
    const escape = await signed('ci', {
      patch: envelope('*** Add File: ok.txt', '+fine', '*** Add File: ../outside.txt', '+escaped'),
    });
    expect(escape.status).toBe(403);
    expect(escape.body.error.code).toBe('path_outside_workspace');
    expect((await read('ok.txt')).error.code).toBe('not_found');
    const denied = await signed('ci', { patch: envelope('*** Add File: .git/hooks/pre-commit', '+#!/bin/sh') });
    expect(denied.body.error.code).toBe('path_denied');
    const unknownField = await signed('ci', { patch: envelope('*** Add File: ok.txt', '+fine'), dryRun: true });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.code).toBe('invalid_argument');
  });

  it('refuses a body over the limit with 413, counted on the bytes received, chunked or not', async () => {
    const big = JSON.stringify({ patch: envelope('*** Add File: big.txt', `+${'x'.repeat(MAX_BODY)}`) });
    const declared = await deliver('ci', big, { 'x-hub-signature-256': sign(big) });
    expect(declared.status).toBe(413);
    expect(declared.body.error.code).toBe('payload_too_large');
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let offset = 0; offset < bytes.byteLength; offset += 1000)
          controller.enqueue(bytes.slice(offset, offset + 1000));
        controller.close();
      },
    });
    const chunked = await fetch(`${server.url}/v1/hooks/ci`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(big) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect((await read('big.txt')).error.code).toBe('not_found');
  });

  it("runs under the owner key's approval policy: a held patch answers 202 with the approval", async () => {
    const careful = await createKey(server, {
      name: 'careful owner',
      role: 'admin',
      workspaces: [WS],
      approvalMode: 'safe',
    });
    expect((await careful.call('PUT', '/v1/hooks/careful', { secret: SECRET, workspace: WS })).status).toBe(201);
    const held = await signed(
      'careful',
      { patch: envelope('*** Add File: held.txt', '+held') },
      { 'x-delivery-id': 'held-1' },
    );
    expect(held.status).toBe(202);
    expect(held.body.approval).toMatchObject({ status: 'pending', tool: 'apply_patch', workspace: WS });
    expect((await read('held.txt')).error.code).toBe('not_found');
    const decided = await server.call('POST', `/v1/approvals/${held.body.approval.id}/decision`, {
      decision: 'approve',
    });
    expect(decided.status).toBe(200);
    expect((await read('held.txt')).result.content).toBe('held\n');
    // The replay answers as the first delivery did, and creates no second approval.
    const replay = await signed(
      'careful',
      { patch: envelope('*** Add File: held.txt', '+held') },
      { 'x-delivery-id': 'held-1' },
    );
    expect({ status: replay.status, body: replay.body }).toEqual({ status: held.status, body: held.body });
  });

  it('makes a checkpoint with the commit message after an applied delivery, when the hook asks for one', async () => {
    const configured = await owner.call('PUT', '/v1/hooks/checkpointed', {
      secret: SECRET,
      workspace: WS,
      checkpoint: true,
    });
    expect(configured.body).toMatchObject({ id: 'checkpointed', checkpoint: true });
    const applied = await signed('checkpointed', {
      patch: envelope('*** Add File: checkpointed.txt', '+kept'),
      commitMessage: 'CI: add checkpointed.txt',
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body.checkpoint).toEqual({ id: expect.any(String), createdAt: expect.any(String) });
    expect(hookDeliveryAnswerSchema.safeParse(applied.body).success).toBe(true);
    const listed = await server.call('GET', `/v1/workspaces/${WS}/checkpoints`);
    expect(listed.body.checkpoints).toContainEqual(
      expect.objectContaining({ id: applied.body.checkpoint.id, message: 'CI: add checkpointed.txt' }),
    );
    // A failed apply makes none.
    const failed = await signed('checkpointed', {
      patch: envelope('*** Update File: checkpointed.txt', '@@', '-absent', '+x'),
    });
    expect(failed.status).toBe(409);
    expect((await server.call('GET', `/v1/workspaces/${WS}/checkpoints`)).body.checkpoints).toHaveLength(
      listed.body.checkpoints.length,
    );
  });

  it('refuses deliveries of a hook whose owner key was revoked (403), applying nothing', async () => {
    const leaving = await createKey(server, { name: 'leaving admin', role: 'admin', workspaces: ['*'] });
    expect((await leaving.call('PUT', '/v1/hooks/orphan', { secret: SECRET, workspace: WS })).status).toBe(201);
    expect((await server.call('DELETE', `/v1/keys/${leaving.id}`)).status).toBe(204);
    const refused = await signed(
      'orphan',
      { patch: envelope('*** Add File: orphan.txt', '+x') },
      { 'x-delivery-id': 'orphan-1' },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect((await read('orphan.txt')).error.code).toBe('not_found');
    // Configured again by a live admin, the sender's redelivery applies.
    expect((await owner.call('PUT', '/v1/hooks/orphan', { secret: SECRET, workspace: WS })).status).toBe(200);
    const redelivered = await signed(
      'orphan',
      { patch: envelope('*** Add File: orphan.txt', '+x') },
      { 'x-delivery-id': 'orphan-1' },
    );
    expect(redelivered.status).toBe(200);
    expect((await read('orphan.txt')).result.content).toBe('x\n');
  });
});

describe('hooks configured with requireTimestamp', () => {
  const body = (path: string) => JSON.stringify({ patch: envelope(`*** Add File: ${path}`, '+timed') });
  /** Headers of a delivery signed at `timestamp` over "<timestamp>.<body>", as a sender of such a hook signs it. */
  const timed = (payload: string, timestamp = now()) => ({
    'x-hub-signature-256': sign(payload, SECRET, timestamp),
    'x-toolgate-timestamp': timestamp,
  });

  beforeAll(async () => {
    const configured = await owner.call('PUT', '/v1/hooks/timed', {
      secret: SECRET,
      workspace: WS,
      requireTimestamp: true,
    });
    expect(configured.status, JSON.stringify(configured.body)).toBe(201);
    expect(configured.body).toEqual({
      id: 'timed',
      workspace: WS,
      checkpoint: false,
      requireTimestamp: true,
      createdAt: expect.any(String),
    });
    expect(hookSchema.safeParse(configured.body).success).toBe(true);
  });

  it('shows the setting, keeps it off by default, and configuring again replaces it', async () => {
    expect((await owner.call('GET', '/v1/hooks/timed')).body).toMatchObject({ id: 'timed', requireTimestamp: true });
    expect(
      (await owner.call('PUT', '/v1/hooks/timed-toggle', { secret: SECRET, workspace: WS, requireTimestamp: true }))
        .body.requireTimestamp,
    ).toBe(true);
    expect(
      (await owner.call('PUT', '/v1/hooks/timed-toggle', { secret: SECRET, workspace: WS })).body.requireTimestamp,
    ).toBe(false);
    expect((await owner.call('GET', '/v1/hooks')).body.hooks).toContainEqual(
      expect.objectContaining({ id: 'timed-toggle', requireTimestamp: false }),
    );
    expect((await server.client.getHook('timed')).requireTimestamp).toBe(true);
  });

  it('applies a delivery signed over "<timestamp>.<body>" with a fresh timestamp', async () => {
    const payload = body('timed/fresh.txt');
    const applied = await deliver('timed', payload, { ...timed(payload), 'x-delivery-id': 'timed-fresh' });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect((await read('timed/fresh.txt')).result.content).toBe('timed\n');
  });

  it('refuses with 401, applying nothing, a delivery without a timestamp, a captured one replayed later, and one re-sent under a new delivery id', async () => {
    const before = await usageOf(owner.id);
    const payload = body('timed/refused.txt');
    // Captured six minutes ago: signed then, with its own timestamp and delivery id.
    const capturedAt = String(Number(now()) - 360);
    const captured = timed(payload, capturedAt);
    const answers = {
      // Signed over the body alone, as a hook without the setting accepts.
      untimed: await deliver('timed', payload, {
        'x-hub-signature-256': sign(payload),
        'x-delivery-id': 'timed-untimed',
      }),
      replayedLater: await deliver('timed', payload, { ...captured, 'x-delivery-id': 'timed-captured' }),
      newIdNoTimestamp: await deliver('timed', payload, {
        'x-hub-signature-256': captured['x-hub-signature-256'],
        'x-delivery-id': 'timed-new-id',
      }),
      newIdFreshTimestamp: await deliver('timed', payload, {
        'x-hub-signature-256': captured['x-hub-signature-256'],
        'x-toolgate-timestamp': now(),
        'x-delivery-id': 'timed-new-id-2',
      }),
      ourHeaderUntimed: await deliver('timed', payload, { 'x-toolgate-signature-256': sign(payload) }),
    };
    for (const [name, answer] of Object.entries(answers))
      expect({ name, status: answer.status, code: answer.body.error?.code }).toEqual({
        name,
        status: 401,
        code: 'unauthorized',
      });
    // The sender holding the secret is told what is missing.
    expect(answers.untimed.body.error.message).toContain('X-Toolgate-Timestamp');
    expect((await read('timed/refused.txt')).error.code).toBe('not_found');
    expect(await usageOf(owner.id)).toEqual(before);
    // A refused delivery id is not kept: sent again properly signed, it applies.
    const resent = await deliver('timed', payload, { ...timed(payload), 'x-delivery-id': 'timed-untimed' });
    expect(resent.status, JSON.stringify(resent.body)).toBe(200);
    expect((await read('timed/refused.txt')).result.content).toBe('timed\n');
  });

  it('leaves a hook without the setting taking deliveries signed over the body alone', async () => {
    const applied = await signed('ci', { patch: envelope('*** Add File: timed/untimed-ok.txt', '+ok') });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  });
});

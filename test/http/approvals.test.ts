// docs/api.md Approvals over real HTTP: the modes, rules, pending calls (202), waiting, decisions by
// approvers only, once-only execution, rejection as a stop reason, expiry and signed notices.
import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { startNoticeReceiver } from '../support/notice-receiver.ts';
import { useServer } from '../support/server-process.ts';

// Approvals pending longer than 5 s expire, so the expiry test need not wait an hour; the notice
// receiver runs on loopback, which the egress rule refuses unless it is listed.
const server = useServer({ env: { TOOLGATE_APPROVAL_TTL_MS: '5000', TOOLGATE_EGRESS_ALLOW_HOSTS: '127.0.0.1' } });

const WS = 'appr';
let agent: TestKey;
let approver: TestKey;

const tool = (key: TestKey, name: string, args: unknown, query = '') =>
  key.call('POST', `/v1/workspaces/${WS}/tools/${name}${query}`, args);
const read = async (path: string) => (await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path })).body;
const decide = (key: TestKey, id: string, decision: 'approve' | 'reject', reason?: string) =>
  key.call('POST', `/v1/approvals/${id}/decision`, reason === undefined ? { decision } : { decision, reason });

beforeAll(async () => {
  await server.call('PUT', `/v1/workspaces/${WS}`);
  await server.call('PUT', '/v1/workspaces/elsewhere');
  await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, { path: 'notes.txt', content: 'hello\n' });
  agent = await createKey(server, { role: 'agent', workspaces: [WS, 'elsewhere'] });
  approver = await createKey(server, { role: 'approver', workspaces: [WS] });
});

describe('safe mode (the default for agent keys)', () => {
  it('runs reads at once and holds writes as pending approvals (202) that do nothing yet', async () => {
    expect((await tool(agent, 'read_file', { path: 'notes.txt' })).status).toBe(200);
    expect((await tool(agent, 'bash', { action: 'list' })).status).toBe(200);
    const searched = await tool(agent, 'grep', { pattern: 'hel+o', outputMode: 'content' });
    expect(searched.status).toBe(200);
    expect(searched.body.result.matches).toEqual([{ path: 'notes.txt', line: 1, text: 'hello' }]);
    expect((await tool(agent, 'glob', { pattern: '*.txt' })).body.result.paths).toContain('notes.txt');
    const pending = await tool(agent, 'write_file', { path: 'held.txt', content: 'held' });
    expect(pending.status).toBe(202);
    expect(pending.body.approval).toMatchObject({
      status: 'pending',
      tool: 'write_file',
      arguments: { path: 'held.txt', content: 'held' },
      workspace: WS,
    });
    expect(pending.body.approval.id).toMatch(/^apr_/);
    // Who asked, by id and name: an approver, who may not list keys, still sees the name.
    expect(pending.body.approval).toMatchObject({ keyId: agent.id, keyName: 'test key' });
    const seen = await approver.call('GET', `/v1/approvals/${pending.body.approval.id}`);
    expect(seen.body).toMatchObject({ keyId: agent.id, keyName: 'test key' });
    expect(Date.parse(pending.body.approval.createdAt)).not.toBeNaN();
    expect((await read('held.txt')).error.code).toBe('not_found');
    for (const args of [
      { action: 'exec', command: 'true' },
      { action: 'start', command: 'true' },
    ]) {
      expect((await tool(agent, 'bash', args)).status).toBe(202);
    }
    const patch = await tool(agent, 'apply_patch', {
      patch: '*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\n',
    });
    expect(patch.status).toBe(202);
  });

  it('validates arguments before asking anyone: bad input is invalid_argument, not an approval', async () => {
    const answer = await tool(agent, 'write_file', { path: 'x.txt' });
    expect(answer.status).toBe(400);
    const bash = await tool(agent, 'bash', { action: 'exec' });
    expect(bash.status).toBe(400);
    expect(bash.body.error.message).toMatch(/needs command/);
  });
});

describe('deciding', () => {
  it('is for approvers: an agent cannot decide its own approvals (403)', async () => {
    const pending = await tool(agent, 'write_file', { path: 'self.txt', content: 'x' });
    const answer = await decide(agent, pending.body.approval.id, 'approve');
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe('forbidden');
    expect((await read('self.txt')).error.code).toBe('not_found');
  });

  it('approve runs the call once, however many times it is approved; a decided approval answers 409', async () => {
    const pending = await tool(agent, 'write_file', { path: 'once.txt', content: 'line\n', mode: 'append' });
    const id = pending.body.approval.id;
    const answers = await Promise.all(Array.from({ length: 5 }, () => decide(approver, id, 'approve')));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409]);
    const winner = answers.find((answer) => answer.status === 200)!;
    expect(winner.body).toMatchObject({ id, status: 'approved', result: { created: true, bytesWritten: 5 } });
    expect(answers.find((answer) => answer.status === 409)!.body.error.code).toBe('conflict');
    expect((await read('once.txt')).result.content).toBe('line\n');
    const again = await decide(approver, id, 'reject');
    expect(again.status).toBe(409);
    const stored = await agent.call('GET', `/v1/approvals/${id}`);
    expect(stored.body).toMatchObject({ id, status: 'approved', result: { created: true } });
  });

  it('approve of a bash exec runs it on the runner and keeps the result', async () => {
    const pending = await tool(agent, 'bash', { action: 'exec', command: 'echo approved > by-bash.txt; echo done' });
    const decided = await decide(approver, pending.body.approval.id, 'approve');
    expect(decided.body).toMatchObject({ status: 'approved', result: { exitCode: 0, stdout: 'done\n' } });
    expect((await read('by-bash.txt')).result.content).toBe('approved\n');
  });

  it('reject never runs the call and records approval_rejected with the stop reason', async () => {
    const pending = await tool(agent, 'write_file', { path: 'never.txt', content: 'x' });
    const id = pending.body.approval.id;
    const answer = await decide(approver, id, 'reject', 'writes to never.txt are not wanted');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id,
      status: 'rejected',
      error: { code: 'approval_rejected', message: '[approval-rejected] writes to never.txt are not wanted' },
      stopReason: 'BLOCKED_BY_APPROVAL',
    });
    expect((await read('never.txt')).error.code).toBe('not_found');
    expect((await decide(approver, id, 'approve')).status).toBe(409);
    expect((await read('never.txt')).error.code).toBe('not_found');
  });

  it('fails an approved call whose key was revoked meanwhile, without running it', async () => {
    const shortLived = await createKey(server, { role: 'agent', workspaces: [WS] });
    const pending = await tool(shortLived, 'write_file', { path: 'revoked.txt', content: 'x' });
    await server.call('DELETE', `/v1/keys/${shortLived.id}`);
    const decided = await decide(approver, pending.body.approval.id, 'approve');
    expect(decided.body).toMatchObject({ status: 'approved', error: { code: 'forbidden' } });
    expect((await read('revoked.txt')).error.code).toBe('not_found');
  });

  it('refuses bad decisions with invalid_argument and unknown ids with 404', async () => {
    const pending = await tool(agent, 'write_file', { path: 'bad-decision.txt', content: 'x' });
    const bad = await approver.call('POST', `/v1/approvals/${pending.body.approval.id}/decision`, {
      decision: 'maybe',
    });
    expect(bad.status).toBe(400);
    expect((await decide(approver, 'apr_nope', 'approve')).status).toBe(404);
  });
});

describe('waitMs', () => {
  // The caller waits up to 60 s: were it woken only then, not by the decision, the answer would come
  // after this test's own 30 s timeout.
  it('answers with the outcome as soon as the decision is made', async () => {
    const waiting = tool(agent, 'write_file', { path: 'waited.txt', content: 'w' }, '?waitMs=60000');
    const id = await eventually(
      async () => {
        const listed = await approver.call('GET', '/v1/approvals?status=pending');
        return listed.body.approvals.find(
          (approval: { arguments: { path?: string } }) => approval.arguments.path === 'waited.txt',
        )?.id as string | undefined;
      },
      { what: 'the approval to be pending', intervalMs: 10 },
    );
    const decided = await decide(approver, id, 'approve');
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.result).toMatchObject({ created: true, resolvedPath: 'waited.txt' });
    expect(decided.status).toBe(200);
  }, 30_000);

  it('answers a waiting caller with the rejection and its stop reason', async () => {
    const waiting = tool(agent, 'write_file', { path: 'refused.txt', content: 'r' }, '?waitMs=20000');
    let id: string | undefined;
    while (!id) {
      const listed = await agent.call('GET', '/v1/approvals?status=pending');
      id = listed.body.approvals.find(
        (approval: { arguments: { path?: string } }) => approval.arguments.path === 'refused.txt',
      )?.id;
    }
    await decide(approver, id, 'reject', 'no');
    const answer = await waiting;
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'approval_rejected', message: '[approval-rejected] no' });
    expect(answer.body.stopReason).toBe('BLOCKED_BY_APPROVAL');
  });

  it('answers 202 with the pending approval when nobody decides in time, and refuses waits over 60 s', async () => {
    const answer = await tool(agent, 'write_file', { path: 'slow.txt', content: 's' }, '?waitMs=200');
    expect(answer.status).toBe(202);
    expect(answer.body.approval.status).toBe('pending');
    for (const waitMs of ['60001', '-1', 'soon']) {
      expect((await tool(agent, 'write_file', { path: 'slow.txt', content: 's' }, `?waitMs=${waitMs}`)).status).toBe(
        400,
      );
    }
  });
});

describe('who sees which approvals', () => {
  it('shows an agent its own, and an approver those of its workspaces only', async () => {
    const other = await createKey(server, { role: 'agent', workspaces: [WS] });
    const mine = await tool(agent, 'write_file', { path: 'mine.txt', content: 'm' });
    const theirs = await tool(other, 'write_file', { path: 'theirs.txt', content: 't' });
    const outside = await agent.call('POST', '/v1/workspaces/elsewhere/tools/write_file', {
      path: 'x.txt',
      content: 'x',
    });
    expect(outside.status).toBe(202);
    const ids = async (key: TestKey) =>
      (await key.call('GET', '/v1/approvals?status=pending&limit=1000')).body.approvals.map(
        (approval: { id: string }) => approval.id,
      );
    const agentSees = await ids(agent);
    expect(agentSees).toContain(mine.body.approval.id);
    expect(agentSees).toContain(outside.body.approval.id);
    expect(agentSees).not.toContain(theirs.body.approval.id);
    const approverSees = await ids(approver);
    expect(approverSees).toEqual(expect.arrayContaining([mine.body.approval.id, theirs.body.approval.id]));
    expect(approverSees).not.toContain(outside.body.approval.id);
    expect((await approver.call('GET', `/v1/approvals/${outside.body.approval.id}`)).status).toBe(404);
    expect((await decide(approver, outside.body.approval.id, 'approve')).status).toBe(404);
    expect((await other.call('GET', `/v1/approvals/${mine.body.approval.id}`)).status).toBe(404);
    expect((await agent.call('GET', `/v1/approvals/${mine.body.approval.id}`)).body.status).toBe('pending');
    expect((await approver.call('GET', '/v1/approvals?status=later')).status).toBe(400);
  });
});

describe('modes and rules', () => {
  it('auto runs everything; manual asks even for reads', async () => {
    const auto = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
    expect((await tool(auto, 'write_file', { path: 'auto.txt', content: 'a' })).status).toBe(200);
    const manual = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'manual' });
    expect((await tool(manual, 'read_file', { path: 'notes.txt' })).status).toBe(202);
    expect((await tool(manual, 'bash', { action: 'list' })).status).toBe(202);
    const search = await tool(manual, 'grep', { pattern: 'hello' });
    expect(search.status).toBe(202);
    expect(search.body.approval).toMatchObject({ tool: 'grep', arguments: { pattern: 'hello' } });
    expect((await tool(manual, 'glob', { pattern: '**' })).status).toBe(202);
  });

  it('rules override the mode, the first match winning; deny is tool_not_allowed', async () => {
    const ruled = await createKey(server, {
      role: 'agent',
      workspaces: [WS],
      approvalMode: 'manual',
      rules: [
        { tool: 'bash', action: 'exec', decision: 'deny' },
        { tool: 'bash', decision: 'allow' },
        { tool: 'read_file', decision: 'allow' },
        { tool: 'read_file', decision: 'deny' },
      ],
    });
    expect((await tool(ruled, 'read_file', { path: 'notes.txt' })).status).toBe(200);
    expect((await tool(ruled, 'bash', { action: 'list' })).status).toBe(200);
    const exec = await tool(ruled, 'bash', { action: 'exec', command: 'true' });
    expect(exec.status).toBe(403);
    expect(exec.body.error.code).toBe('tool_not_allowed');
    expect((await tool(ruled, 'write_file', { path: 'r.txt', content: 'r' })).status).toBe(202);
    const approving = await createKey(server, {
      role: 'agent',
      workspaces: [WS],
      approvalMode: 'auto',
      rules: [{ tool: 'read_file', decision: 'approve' }],
    });
    expect((await tool(approving, 'read_file', { path: 'notes.txt' })).status).toBe(202);
  });
});

describe('expiry', () => {
  it('rejects a pending approval after the configured time with the reason expired, waking a waiting caller', async () => {
    const answer = await tool(agent, 'write_file', { path: 'expired.txt', content: 'e' }, '?waitMs=15000');
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'approval_rejected', message: '[approval-rejected] expired' });
    expect(answer.body.stopReason).toBe('BLOCKED_BY_APPROVAL');
    const id = answer.body.error.details.approvalId;
    const stored = await agent.call('GET', `/v1/approvals/${id}`);
    expect(stored.body).toMatchObject({ status: 'rejected', reason: 'expired', stopReason: 'BLOCKED_BY_APPROVAL' });
    // Rejected by the configured time, not before it (test/calls/ holds the exact moment to an injected clock).
    const [created, expires, decidedAt] = [stored.body.createdAt, stored.body.expiresAt, stored.body.decidedAt].map(
      (at: string) => Date.parse(at),
    );
    expect(expires! - created!).toBe(5000);
    expect(decidedAt).toBeGreaterThanOrEqual(expires!);
    expect((await decide(approver, id, 'approve')).status).toBe(409);
    expect((await read('expired.txt')).error.code).toBe('not_found');
  });
});

describe('notify URL', () => {
  it('POSTs a notice signed with the key notify secret when an approval is created', async () => {
    const receiver = await startNoticeReceiver();
    const received = receiver.notices;
    try {
      const url = `${receiver.url}/hook`;
      const notified = await createKey(server, { role: 'agent', workspaces: [WS], notifyUrl: url });
      expect(notified.notifySecret).toMatch(/^tgn_/);
      const before = Math.floor(Date.now() / 1000);
      const pending = await tool(notified, 'write_file', { path: 'notified.txt', content: 'n' });
      await eventually(() => received.length > 0, { what: 'the notice to arrive' });
      expect(received).toHaveLength(1);
      const [notice] = received;
      const timestamp = notice!.headers['x-toolgate-timestamp'] as string;
      const expected = createHmac('sha256', notified.notifySecret!)
        .update(`${timestamp}.${notice!.body}`)
        .digest('hex');
      expect(notice!.headers['x-toolgate-signature-256']).toBe(`sha256=${expected}`);
      // The time of sending, in seconds: no earlier than the call, no later than its arrival.
      expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
      expect(Number(timestamp)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
      const body = JSON.parse(notice!.body);
      expect(body).toMatchObject({
        type: 'approval.created',
        approval: { id: pending.body.approval.id, status: 'pending', tool: 'write_file' },
      });
      expect(notice!.headers['x-toolgate-delivery']).toBe(pending.body.approval.id);
    } finally {
      await receiver.close();
    }
  });
});

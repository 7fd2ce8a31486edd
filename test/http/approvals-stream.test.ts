// docs/api.md Live processes: GET /v1/approvals/stream over real HTTP, on both homes. Each key's stream
// shows the approvals GET /v1/approvals would show it, as they are created and decided, in order, with
// the objects the approval routes answer; another tenant's approvals never appear.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ServerEvent } from '../../src/core/server-events.ts';
import { openStream, type OpenedStream } from '../support/event-stream.ts';
import { createKey, createRunnerKey, type TestKey } from '../support/keys.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer();
const A = 'approvals-a';
const B = 'approvals-b';

let askerA: TestKey;
let otherAskerA: TestKey;
let approverA: TestKey;
let askerB: TestKey;
let approverB: TestKey;

beforeAll(async () => {
  for (const ws of [A, B]) expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
  const asker = (name: string, ws: string) =>
    createKey(server, { name, role: 'agent', workspaces: [ws], approvalMode: 'manual' });
  askerA = await asker('asker A', A);
  otherAskerA = await asker('other asker A', A);
  askerB = await asker('asker B', B);
  approverA = await createKey(server, { name: 'approver A', role: 'approver', workspaces: [A] });
  approverB = await createKey(server, { name: 'approver B', role: 'approver', workspaces: [B] });
});

/** A call that waits for approval; answers the approval's id. */
async function ask(key: TestKey, ws: string, path: string): Promise<string> {
  const answer = await key.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path });
  expect(answer.status, JSON.stringify(answer.body)).toBe(202);
  return answer.body.approval.id;
}

async function decide(key: TestKey, id: string, decision: 'approve' | 'reject'): Promise<void> {
  const answer = await key.call('POST', `/v1/approvals/${id}/decision`, { decision, reason: 'stream test' });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

/** Reads `stream`'s approval events until one shows approval `id` in `status`; answers every event read. */
async function readUntil(stream: OpenedStream, id: string, status: string): Promise<any[]> {
  const seen: any[] = [];
  const last = await stream.until((event: ServerEvent) => {
    expect(event.event).toBe('approval');
    const approval = JSON.parse(event.data);
    seen.push(approval);
    return approval.id === id && approval.status === status;
  });
  if (!last) throw new Error(`the stream ended before approval ${id} was ${status}: ${JSON.stringify(seen)}`);
  return seen;
}

const trail = (events: any[]) => events.map((approval) => `${approval.arguments.path}:${approval.status}`);

describe('the approvals stream', () => {
  it("shows each key what the listing shows it, as approvals are created and decided, and never another tenant's", async () => {
    const open = (key: TestKey | undefined) =>
      openStream(server.url, key?.secret ?? server.key, '/v1/approvals/stream');
    const streams = {
      askerA: await open(askerA),
      approverA: await open(approverA),
      askerB: await open(askerB),
      approverB: await open(approverB),
      admin: await open(undefined),
    };
    for (const stream of Object.values(streams)) expect(stream.status).toBe(200);

    // Tenant B first, seen through to the end by the admin's stream, which sees everything.
    const b1 = await ask(askerB, B, 'b1.txt');
    await decide(approverB, b1, 'reject');
    expect(trail(await readUntil(streams.admin, b1, 'rejected'))).toEqual(['b1.txt:pending', 'b1.txt:rejected']);
    expect(trail(await readUntil(streams.askerB, b1, 'rejected'))).toEqual(['b1.txt:pending', 'b1.txt:rejected']);
    expect(trail(await readUntil(streams.approverB, b1, 'rejected'))).toEqual(['b1.txt:pending', 'b1.txt:rejected']);

    // Then tenant A: B's events reached the streams before any of these, so a leak would show first.
    const a1 = await ask(askerA, A, 'a1.txt');
    const a2 = await ask(otherAskerA, A, 'a2.txt');
    await decide(approverA, a1, 'reject');
    await decide(approverA, a2, 'approve');
    const approverTrail = trail(await readUntil(streams.approverA, a2, 'approved'));
    expect(approverTrail.slice(0, 3)).toEqual(['a1.txt:pending', 'a2.txt:pending', 'a1.txt:rejected']);
    expect(approverTrail.every((step) => step.startsWith('a'))).toBe(true);
    // The asker of a1 sees its own approval only, never the other asker's.
    expect(trail(await readUntil(streams.askerA, a1, 'rejected'))).toEqual(['a1.txt:pending', 'a1.txt:rejected']);
    const adminTrail = trail(await readUntil(streams.admin, a2, 'approved'));
    expect(adminTrail.slice(0, 3)).toEqual(['a1.txt:pending', 'a2.txt:pending', 'a1.txt:rejected']);

    // The last event of each approval is the object GET /v1/approvals/{id} answers.
    const finalA2 = (await server.call('GET', `/v1/approvals/${a2}`)).body;
    const b2 = await ask(askerB, B, 'b2.txt');
    const lastOfB = await readUntil(streams.approverB, b2, 'pending');
    expect(trail(lastOfB)).toEqual(['b2.txt:pending']);
    expect(lastOfB[0]).toEqual((await server.call('GET', `/v1/approvals/${b2}`)).body);
    expect(finalA2.status).toBe('approved');

    for (const stream of Object.values(streams)) stream.close();
  });

  it('refuses runner keys and requests without a key, as the listing does', async () => {
    const runner = await createRunnerKey(server);
    const refused = await openStream(server.url, runner.secret, '/v1/approvals/stream');
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    const anonymous = await openStream(server.url, undefined, '/v1/approvals/stream');
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'unauthorized']);
  });
});

// docs/api.md Live processes: GET /v1/workspaces/{ws}/processes/{id}/logs/stream over real HTTP with a
// real runner, on both homes: every character once across a reconnection with Last-Event-ID, the exit
// event's snapshot, 100 streams at once, a dropped offset made visible, the scope and tool rules of
// bash `logs`, one usage record per stream, and a server that stays up when clients vanish.
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { openStream, readLogToExit } from '../support/event-stream.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { useServer } from '../support/server-process.ts';

// A small ring, so one test can outrun it; the other processes print far less than this.
const RING = 65_536;
// Keep-alives (and the key checks that go with them) every half second, so tests can wait for them.
const server = useServer({
  env: { TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: String(RING), TOOLGATE_STREAM_KEEPALIVE_MS: '500' },
});
const WS = 'log-stream';
const OTHER = 'log-stream-other';

const bash = async (args: Record<string, unknown>, ws = WS) => {
  const answer = await server.call('POST', `/v1/workspaces/${ws}/tools/bash`, args);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.result;
};
const streamPath = (processId: string, query = '', ws = WS) =>
  `/v1/workspaces/${ws}/processes/${processId}/logs/stream${query}`;
const open = (processId: string, query = '', headers: Record<string, string> = {}, key = server.key) =>
  openStream(server.url, key, streamPath(processId, query), headers);

/** Lines `line-<from>` to `line-<to>`, each with its newline: what `seq` prints with the prefix. */
const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line-${from + i}\n`).join('');

/** Prints lines 1 to `half`, waits for a line on stdin, then prints the rest to `total`, pausing now and then. */
const twoHalves = (half: number, total: number) =>
  `for i in $(seq 1 ${half}); do echo line-$i; [ $((i % 25)) = 0 ] && sleep 0.02; done; read go; ` +
  `for i in $(seq ${half + 1} ${total}); do echo line-$i; [ $((i % 25)) = 0 ] && sleep 0.02; done; true`;

beforeAll(async () => {
  for (const ws of [WS, OTHER]) expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
});

describe('a log stream', () => {
  it('gives every character exactly once across a disconnection resumed with Last-Event-ID, then exit with the snapshot', async () => {
    const { processId } = await bash({ action: 'start', command: twoHalves(100, 200) });
    const first = await open(processId);
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    // Read until the first half is in, then vanish mid-stream while the process waits on stdin.
    let text = '';
    let lastId = 0;
    let expectedOffset = 0;
    while (text.length < lines(1, 100).length) {
      const event = await first.next();
      expect(event?.event).toBe('output');
      const output = JSON.parse(event!.data);
      expect(output.offset).toBe(expectedOffset);
      text += output.data;
      lastId = Number(event!.id);
      expect(lastId).toBe(output.offset + output.data.length);
      expectedOffset = lastId;
    }
    first.close();
    expect(text).toBe(lines(1, 100));
    await bash({ action: 'write', processId, input: 'go\n' });

    // The offset in the query is what the stream was first opened with; Last-Event-ID wins over it.
    const resumed = await open(processId, '?offset=0', { 'last-event-id': String(lastId) });
    expect(resumed.status).toBe(200);
    const rest = await readLogToExit(resumed);
    expect(rest.events[0]!.offset).toBe(lastId);
    for (let i = 1; i < rest.events.length; i += 1) expect(rest.events[i]!.offset).toBe(rest.events[i - 1]!.id);
    expect(text + rest.text).toBe(lines(1, 200));
    const status = await bash({ action: 'status', processId });
    const { id, ...snapshot } = rest.exit;
    expect(snapshot).toEqual(status);
    expect(snapshot).toMatchObject({ processId, status: 'exited', exitCode: 0 });
    expect(id).toBe(lines(1, 200).length);
    // After the exit event the server ends the stream.
    expect(await resumed.next()).toBeUndefined();
  });

  it('starts at the offset asked for, and a stream of an ended process sends the rest and the exit at once', async () => {
    const { processId } = await bash({ action: 'start', command: 'seq 1 50' });
    await eventually(async () => ['exited'].includes((await bash({ action: 'status', processId })).status));
    const from = '1\n2\n'.length;
    const all = await readLogToExit(await open(processId, `?offset=${from}`));
    expect(all.text).toBe(Array.from({ length: 48 }, (_, i) => `${i + 3}\n`).join(''));
    expect(all.events[0]!.offset).toBe(from);
    expect(all.exit.exitCode).toBe(0);
    // Resuming at the end gives the exit alone.
    const atEnd = await readLogToExit(await open(processId, '', { 'last-event-id': String(all.exit.id) }));
    expect(atEnd).toMatchObject({ text: '', events: [] });
  });

  it("follows with the client's async iterator to the exit snapshot", async () => {
    const { processId } = await bash({ action: 'start', command: twoHalves(30, 60) });
    const follow = server.client.followLogs(WS, processId);
    let text = '';
    let next = await follow.next();
    while (!next.done) {
      text += next.value.data;
      if (text === lines(1, 30)) await bash({ action: 'write', processId, input: 'go\n' });
      next = await follow.next();
    }
    expect(text).toBe(lines(1, 60));
    expect(next.value).toEqual(await bash({ action: 'status', processId }));
    await expect(server.client.followLogs(WS, 'proc_absent').next()).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('ends with an error event (not_found) when the workspace is deleted under it', async () => {
    const ws = 'log-stream-gone';
    expect((await server.call('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
    const { processId } = await bash({ action: 'start', command: 'echo hi; read x' }, ws);
    const stream = await openStream(server.url, server.key, streamPath(processId, '', ws));
    expect(JSON.parse((await stream.until((event) => event.event === 'output'))!.data).data).toBe('hi\n');
    expect((await server.call('DELETE', `/v1/workspaces/${ws}`)).status).toBe(204);
    const end = await stream.until((event) => event.event !== 'output');
    expect(end?.event).toBe('error');
    expect(JSON.parse(end!.data).error.code).toBe('not_found');
    expect(await stream.next()).toBeUndefined();
  });

  it('sends the full output to each of 100 streams open at once', async () => {
    const { processId } = await bash({ action: 'start', command: twoHalves(0, 400) });
    const streams = await Promise.all(Array.from({ length: 100 }, () => open(processId)));
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
    await bash({ action: 'write', processId, input: 'go\n' });
    const read = await Promise.all(streams.map((stream) => readLogToExit(stream)));
    for (const one of read) {
      expect(one.text).toBe(lines(1, 400));
      expect(one.exit.status).toBe('exited');
    }
  });

  it('reports an offset the ring has dropped as logs does: from the oldest held, with truncated: true', async () => {
    const { processId } = await bash({
      action: 'start',
      command: `head -c ${RING * 3} /dev/zero | tr '\\0' x; echo; echo done`,
    });
    await eventually(async () => (await bash({ action: 'status', processId })).status === 'exited');
    const logs = await bash({ action: 'logs', processId, offset: 0, limit: 1 });
    expect(logs.truncated).toBe(true);
    const streamed = await readLogToExit(await open(processId, '?offset=0'));
    expect(streamed.events[0]).toMatchObject({ offset: logs.startOffset, truncated: true });
    expect(streamed.events.slice(1).every((event) => event.truncated === undefined)).toBe(true);
    expect(streamed.text.endsWith('x\ndone\n')).toBe(true);
    expect(streamed.exit.id).toBe(RING * 3 + 'x\ndone\n'.length - 1);
  });
});

describe('the rules of bash logs', () => {
  let processId: string;
  let outsider: TestKey;
  let readOnly: TestKey;
  let execOnly: TestKey;
  let logsOnly: TestKey;
  let manual: TestKey;

  beforeAll(async () => {
    processId = (await bash({ action: 'start', command: 'echo kept; read x' })).processId;
    outsider = await createKey(server, { role: 'agent', workspaces: [OTHER], approvalMode: 'auto' });
    readOnly = await createKey(server, { role: 'agent', workspaces: [WS], tools: ['read_file'] });
    execOnly = await createKey(server, { role: 'agent', workspaces: [WS], tools: ['bash:exec'] });
    logsOnly = await createKey(server, { role: 'agent', workspaces: [WS], tools: ['bash:logs'] });
    manual = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'manual' });
    await eventually(async () => (await bash({ action: 'logs', processId })).data === 'kept\n');
  });

  /** What a refused stream could have touched: the process and its log. */
  const state = async () => ({
    status: await bash({ action: 'status', processId }),
    logs: await bash({ action: 'logs', processId, offset: 0 }),
  });

  it('answers a key outside the workspace 404 as if absent, and one whose allowlist lacks bash:logs 403', async () => {
    const before = await state();
    const absent = await open(processId, '', {}, outsider.secret);
    expect(absent.status).toBe(404);
    expect(absent.body.error.code).toBe('not_found');
    expect(absent.body.error.message).not.toMatch(/scope/);
    for (const key of [readOnly, execOnly]) {
      const refused = await open(processId, '', {}, key.secret);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('tool_not_allowed');
    }
    const asks = await open(processId, '', {}, manual.secret);
    expect(asks.status).toBe(403);
    expect(asks.body.error).toMatchObject({ code: 'forbidden' });
    expect(asks.body.error.message).toMatch(/approv/);
    const allowed = await open(processId, '', {}, logsOnly.secret);
    expect(allowed.status).toBe(200);
    expect(JSON.parse((await allowed.until((event) => event.event === 'output'))!.data)).toEqual({
      data: 'kept\n',
      offset: 0,
    });
    allowed.close();
    expect(await state()).toEqual(before);
  });

  it('refuses hostile process ids, offsets and Last-Event-IDs with invalid_argument, and an unknown process is not_found', async () => {
    const before = await state();
    const hostile = [
      '..%2F..%2Fetc',
      'proc%00x',
      'a'.repeat(201),
      '%E2%80%AEproc',
      'proc%20x',
      'proc%2Fx',
      '%3Cscript%3E',
    ];
    for (const id of hostile) {
      const answer = await openStream(server.url, server.key, `/v1/workspaces/${WS}/processes/${id}/logs/stream`);
      expect([answer.status, answer.body?.error?.code], id).toEqual([400, 'invalid_argument']);
      expect(answer.body.error.message).toMatch(/process id/);
    }
    for (const query of [
      '?offset=-1',
      '?offset=1.5',
      '?offset=abc',
      '?offset=',
      '?offset=1e3',
      '?offset=99999999999999999',
    ]) {
      const answer = await open(processId, query);
      expect([answer.status, answer.body?.error?.code], query).toEqual([400, 'invalid_argument']);
      expect(answer.body.error.message).toMatch(/^offset must be/);
    }
    for (const id of ['-1', 'x', '1 2', '0x10', '12abc']) {
      const answer = await open(processId, '', { 'last-event-id': id });
      expect([answer.status, answer.body?.error?.code], id).toEqual([400, 'invalid_argument']);
      expect(answer.body.error.message).toMatch(/^Last-Event-ID must be/);
    }
    const unknown = await open('proc_00000000000000000000000000000000');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
    // A process of another workspace is unknown here, whatever its id.
    const elsewhere = (await bash({ action: 'start', command: 'echo other' }, OTHER)).processId;
    const crossed = await open(elsewhere);
    expect([crossed.status, crossed.body.error.code]).toEqual([404, 'not_found']);
    const noWorkspace = await openStream(server.url, server.key, streamPath(processId, '', 'never-made'));
    expect([noWorkspace.status, noWorkspace.body.error.code]).toEqual([404, 'not_found']);
    expect(await state()).toEqual(before);
  });

  it('is metered as one bash:logs call per stream, however long it stays open', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
    const { processId: ended } = await bash({ action: 'start', command: 'seq 1 3000' });
    await eventually(async () => (await bash({ action: 'status', processId: ended })).status === 'exited');
    const read = await readLogToExit(await openStream(server.url, key.secret, streamPath(ended)));
    expect(read.events.length).toBeGreaterThan(0);
    const dropped = await openStream(server.url, key.secret, streamPath(processId));
    await dropped.until((event) => event.event === 'output');
    dropped.close();
    const usage = async () =>
      (await key.call('GET', '/v1/usage?groupBy=tool')).body.rows.find((row: any) => row.group === 'bash:logs');
    // The dropped stream's record is written once the server notices the client went: at once on the
    // Node home; on the Cloudflare home at the object's next write, a keep-alive (docs/api.md).
    const row = await eventually(
      async () => {
        const found = await usage();
        return found?.calls === 2 && found;
      },
      { what: 'both streams to be recorded', timeoutMs: 75_000 },
    );
    expect(row).toMatchObject({ calls: 2, errors: 0 });
    expect(row.bytesOut).toBeGreaterThan(read.text.length);
  });

  it('keeps a quiet stream open with keep-alive comments, and ends the streams of a key once it is revoked', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: [WS], approvalMode: 'auto' });
    const response = await fetch(server.url + streamPath(processId), {
      headers: { authorization: `Bearer ${key.secret}` },
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let raw = '';
    while (!raw.includes(': keep-alive\n\n')) raw += (await reader.read()).value ?? '';
    expect(raw).toMatch(/^: open\n\nid: 5\nevent: output\ndata: \{"data":"kept\\n","offset":0\}\n\n/);
    const approvals = await openStream(server.url, key.secret, '/v1/approvals/stream');
    expect(approvals.status).toBe(200);
    expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    const [logsEnd, approvalsEnd] = await Promise.all([
      (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return raw;
          raw += value;
        }
      })(),
      approvals.until((event) => event.event === 'error'),
    ]);
    expect(logsEnd).toMatch(/event: error\ndata: \{"error":\{"code":"unauthorized","message":"[^"]*revoked/);
    expect(JSON.parse(approvalsEnd!.data).error.code).toBe('unauthorized');
    expect(await approvals.next()).toBeUndefined();
  });

  it('stays up when clients drop streams abruptly, and serves the next one', async () => {
    for (let round = 0; round < 3; round += 1) {
      const streams = await Promise.all(Array.from({ length: 20 }, () => open(processId)));
      await Promise.all(streams.map((stream) => stream.until((event) => event.event === 'output')));
      for (const stream of streams) stream.close();
    }
    const health = await server.call('GET', '/healthz');
    expect(health.status).toBe(200);
    const next = await open(processId);
    expect(JSON.parse((await next.until((event) => event.event === 'output'))!.data).data).toBe('kept\n');
    next.close();
    await bash({ action: 'write', processId, input: 'x\n' });
    const ended = await readLogToExit(await open(processId));
    expect(ended.exit.status).toBe('exited');
    expect(server.output()).not.toMatch(/unhandled|internal error/i);
  });
});

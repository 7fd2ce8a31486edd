// docs/api.md usage over real HTTP: one record per tool call whatever its outcome, exact totals
// (also after a restart and after a crash), quotas admitting exactly N, and the rate limit.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { createKey, type TestKey } from '../support/keys.ts';
import { callApi, makeDataDir, removeDir, startServer, type ServerProcess } from '../support/server-process.ts';

const dataDir = makeDataDir();
let server: ServerProcess = await startServer({ dataDir });
afterAll(async () => {
  await server.stop();
  removeDir(dataDir);
});

const byteLength = (text: string) => Buffer.byteLength(text, 'utf8');

/** Calls a tool and returns the answer with the exact bytes sent and received. */
async function metered(key: TestKey, ws: string, tool: string, args: unknown, query = '') {
  const body = JSON.stringify(args);
  const response = await fetch(`${server.url}/v1/workspaces/${ws}/tools/${tool}${query}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return {
    status: response.status,
    body: JSON.parse(text),
    bytesIn: byteLength(body),
    bytesOut: byteLength(text),
    headers: response.headers,
  };
}

/** The key's usage, asked of the server running now (a restart changes its port). */
async function usage(key: Pick<TestKey, 'secret'>, query: string) {
  const answer = await callApi(server.url, key.secret, 'GET', `/v1/usage?${query}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.rows as {
    group: string;
    calls: number;
    errors: number;
    bytesIn: number;
    bytesOut: number;
    processSeconds: number;
  }[];
}

const admin = () => ({ secret: server.key });

describe('1,000 mixed calls', () => {
  it('are metered exactly: calls, errors, bytes in and out, per tool and in total, also after a restart', async () => {
    await server.call('PUT', '/v1/workspaces/meter-a');
    await server.call('PUT', '/v1/workspaces/meter-b');
    const key = await createKey(server, {
      role: 'agent',
      workspaces: ['meter-a', 'meter-b'],
      approvalMode: 'auto',
      rules: [{ tool: 'apply_patch', decision: 'approve' }],
    });
    const approver = await createKey(server, { role: 'approver', workspaces: ['*'] });
    const expected = new Map<string, { calls: number; errors: number; bytesIn: number; bytesOut: number }>();
    const count = (group: string, ok: boolean, bytesIn: number, bytesOut: number | undefined) => {
      const row = expected.get(group) ?? { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
      row.calls += 1;
      row.errors += ok ? 0 : 1;
      row.bytesIn += bytesIn;
      row.bytesOut += bytesOut ?? 0;
      expected.set(group, row);
    };
    const pending: string[] = [];
    const work = Array.from({ length: 1000 }, (_, i) => async () => {
      const ws = i % 3 === 0 ? 'meter-b' : 'meter-a';
      switch (i % 8) {
        case 0:
        case 1: {
          const answer = await metered(key, ws, 'write_file', { path: `f${i}.txt`, content: `file ${i}\n` });
          count('write_file', answer.status === 200, answer.bytesIn, answer.bytesOut);
          break;
        }
        case 2: {
          const answer = await metered(key, ws, 'read_file', { path: `f${i - 2}.txt` });
          count('read_file', answer.status === 200, answer.bytesIn, answer.bytesOut);
          break;
        }
        case 3: {
          if (i % 16 === 11) {
            const answer = await metered(key, ws, 'grep', {
              pattern: 'file \\d+',
              glob: `f1*.txt`,
              outputMode: 'count',
            });
            expect(answer.status).toBe(200);
            count('grep', true, answer.bytesIn, answer.bytesOut);
            break;
          }
          const answer = await metered(key, ws, 'read_file', { path: `missing-${i}.txt` });
          expect(answer.status).toBe(404);
          count('read_file', false, answer.bytesIn, answer.bytesOut);
          break;
        }
        case 4: {
          const answer = await metered(key, ws, 'write_file', { path: `bad-${i}.txt`, content: 1 });
          expect(answer.status).toBe(400);
          count('write_file', false, answer.bytesIn, answer.bytesOut);
          break;
        }
        case 5: {
          if (i % 16 === 13) {
            const answer = await metered(key, ws, 'glob', { pattern: 'f*.txt', maxResults: 5 });
            expect(answer.status).toBe(200);
            count('glob', true, answer.bytesIn, answer.bytesOut);
            break;
          }
          const answer = await metered(key, ws, 'bash', { action: 'list' });
          count('bash:list', answer.status === 200, answer.bytesIn, answer.bytesOut);
          break;
        }
        case 6: {
          const answer = await metered(key, ws, 'apply_patch', {
            patch: `*** Begin Patch\n*** Add File: p${i}.txt\n+p\n*** End Patch\n`,
          });
          expect(answer.status).toBe(202);
          pending.push(answer.body.approval.id);
          // Its bytes out are those of the final answer, checked by count below without bytesOut.
          count('apply_patch', true, answer.bytesIn, undefined);
          break;
        }
        default: {
          const answer = await metered(key, ws, 'no_such_tool', { x: 1 });
          expect(answer.status).toBe(404);
          count('no_such_tool', false, 0, answer.bytesOut);
        }
      }
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < work.length) await work[next++]!();
      }),
    );
    // Half the patches are approved (and run), half rejected (an error); decided 16 at a time like
    // the calls, each patch its own file, so the order of the decisions changes no record.
    let decided = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (decided < pending.length) {
          const index = decided++;
          const answer = await approver.call('POST', `/v1/approvals/${pending[index]}/decision`, {
            decision: index % 2 === 0 ? 'approve' : 'reject',
          });
          expect(answer.status).toBe(200);
          if (index % 2 === 1) expected.get('apply_patch')!.errors += 1;
        }
      }),
    );
    const check = async () => {
      const rows = await usage(key, 'groupBy=tool');
      const got = new Map(rows.map((row) => [row.group, row]));
      expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
      for (const [group, row] of expected) {
        const actual = got.get(group)!;
        expect({ group, calls: actual.calls, errors: actual.errors, bytesIn: actual.bytesIn }).toEqual({
          group,
          calls: row.calls,
          errors: row.errors,
          bytesIn: row.bytesIn,
        });
        if (group !== 'apply_patch')
          expect({ group, bytesOut: actual.bytesOut }).toEqual({ group, bytesOut: row.bytesOut });
      }
      expect(rows.reduce((sum, row) => sum + row.calls, 0)).toBe(1000);
      const perWorkspace = await usage(key, 'groupBy=workspace');
      expect(Object.fromEntries(perWorkspace.map((row) => [row.group, row.calls]))).toEqual({
        'meter-a': 666,
        'meter-b': 334,
      });
    };
    await check();
    await server.stop();
    server = await startServer({ dataDir });
    await check();
  }, 120_000);
});

describe('GET /v1/usage', () => {
  it("shows a key its own calls only and an admin everyone's, grouped by key; bash per action", async () => {
    await server.call('PUT', '/v1/workspaces/meter-c');
    const one = await createKey(server, { role: 'agent', workspaces: ['meter-c'], approvalMode: 'auto' });
    const two = await createKey(server, { role: 'agent', workspaces: ['meter-c'], approvalMode: 'auto' });
    await metered(one, 'meter-c', 'bash', { action: 'exec', command: 'sleep 0.3' });
    await metered(two, 'meter-c', 'read_file', { path: 'nothing' });
    expect((await usage(one, 'groupBy=tool')).map((row) => row.group)).toEqual(['bash:exec']);
    const [exec] = await usage(one, 'groupBy=tool');
    expect(exec!.processSeconds).toBeGreaterThan(0.2);
    expect((await usage(two, 'groupBy=tool')).map((row) => [row.group, row.calls, row.errors])).toEqual([
      ['read_file', 1, 1],
    ]);
    const byKey = await usage(admin(), 'groupBy=key');
    expect(byKey.find((row) => row.group === one.id)?.calls).toBe(1);
    expect(byKey.find((row) => row.group === two.id)?.calls).toBe(1);
    expect((await one.call('GET', `/v1/usage?keyId=${two.id}`)).status).toBe(403);
    expect((await usage(admin(), `groupBy=tool&keyId=${two.id}`)).map((row) => row.group)).toEqual(['read_file']);
  });

  it('counts a started process by its run time once it ends', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: ['meter-c'], approvalMode: 'auto' });
    const sent = performance.now();
    const started = await metered(key, 'meter-c', 'bash', { action: 'start', command: 'sleep 0.5' });
    expect(started.status).toBe(200);
    const seconds = await eventually(
      async () =>
        (await usage(key, 'groupBy=tool')).find((row) => row.group === 'bash:start')?.processSeconds || undefined,
      {
        what: 'the run time to be counted',
        intervalMs: 100,
      },
    );
    const observed = (performance.now() - sent) / 1000;
    // Run time is measured between the runner's started and exit reports, so it is close to, not exactly, 0.5 s;
    // and it can be no longer than the test saw pass from the start call to the record, however slow the host.
    expect(seconds).toBeGreaterThan(0.35);
    expect(seconds).toBeLessThanOrEqual(observed);
  });

  it('filters by time and refuses bad parameters', async () => {
    const key = await createKey(server, { role: 'agent', workspaces: ['meter-c'], approvalMode: 'auto' });
    await metered(key, 'meter-c', 'read_file', { path: 'nothing' });
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(await usage(key, `from=${later}`)).toEqual([]);
    expect((await usage(key, `from=2020-01-01T00:00:00Z&to=${later}`))[0]?.calls).toBe(1);
    for (const query of ['groupBy=colour', 'from=yesterday', `from=${later}&to=2020-01-01T00:00:00Z`]) {
      expect((await key.call('GET', `/v1/usage?${query}`)).status).toBe(400);
    }
  });
});

describe('quotas', () => {
  it('admit exactly N calls under 50 concurrent callers; the rest are quota_exceeded (402) and do nothing', async () => {
    await server.call('PUT', '/v1/workspaces/quota');
    const key = await createKey(server, {
      role: 'agent',
      workspaces: ['quota'],
      approvalMode: 'auto',
      quota: { calls: 10, period: 'day' },
    });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => metered(key, 'quota', 'write_file', { path: `q${i}.txt`, content: 'q' })),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10);
    const refused = answers.filter((answer) => answer.status === 402);
    expect(refused).toHaveLength(40);
    expect(refused[0]!.body.error).toMatchObject({ code: 'quota_exceeded', details: { quota: 'calls', limit: 10 } });
    expect(refused[0]!.body.error.message).toMatch(/renews at/);
    const listing = await server.call('GET', '/v1/workspaces/quota/files');
    expect(listing.body.entries).toHaveLength(10);
    const [row] = await usage(key, 'groupBy=tool');
    expect(row).toMatchObject({ group: 'write_file', calls: 50, errors: 40 });
  });

  it('of process seconds stop bash exec and start once spent, and leave reads alone', async () => {
    const key = await createKey(server, {
      role: 'agent',
      workspaces: ['quota'],
      approvalMode: 'auto',
      quota: { processSeconds: 0.2, period: 'month' },
    });
    expect((await metered(key, 'quota', 'bash', { action: 'exec', command: 'sleep 0.3' })).status).toBe(200);
    const over = await metered(key, 'quota', 'bash', { action: 'exec', command: 'echo no > over.txt' });
    expect(over.status).toBe(402);
    expect(over.body.error.details.quota).toBe('processSeconds');
    expect((await metered(key, 'quota', 'bash', { action: 'start', command: 'true' })).status).toBe(402);
    expect((await metered(key, 'quota', 'read_file', { path: 'q0.txt' })).status).toBe(200);
    expect((await metered(key, 'quota', 'bash', { action: 'list' })).status).toBe(200);
  });
});

describe('rate limit', () => {
  it('answers 429 rate_limited with Retry-After past the key limit, and meters the refused call', async () => {
    await server.call('PUT', '/v1/workspaces/rate');
    const key = await createKey(server, {
      role: 'agent',
      workspaces: ['rate'],
      approvalMode: 'auto',
      rateLimitPerMinute: 3,
    });
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof metered>> | undefined;
    for (let i = 0; i < 4; i += 1) {
      const answer = await metered(key, 'rate', 'read_file', { path: 'none' });
      statuses.push(answer.status);
      if (answer.status === 429) limited = answer;
    }
    expect(statuses).toEqual([404, 404, 404, 429]);
    expect(limited!.body.error.code).toBe('rate_limited');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const [row] = await usage(key, 'groupBy=tool');
    expect(row).toMatchObject({ calls: 4, errors: 4 });
  });
});

describe('a restart', () => {
  it('keeps pending approvals: approved afterwards, the call runs once and its one record closes', async () => {
    await server.call('PUT', '/v1/workspaces/restart');
    const key = await createKey(server, { role: 'agent', workspaces: ['restart'] });
    const pending = await metered(key, 'restart', 'write_file', { path: 'later.txt', content: 'later' });
    expect(pending.status).toBe(202);
    await server.stop();
    server = await startServer({ dataDir });
    const listed = await callApi(server.url, key.secret, 'GET', '/v1/approvals?status=pending');
    expect(listed.body.approvals.map((approval: { id: string }) => approval.id)).toEqual([pending.body.approval.id]);
    expect((await usage(key, 'groupBy=tool'))[0]).toMatchObject({ calls: 1, errors: 0 });
    const decided = await server.call('POST', `/v1/approvals/${pending.body.approval.id}/decision`, {
      decision: 'approve',
    });
    expect(decided.body).toMatchObject({ status: 'approved', result: { created: true } });
    const read = await server.call('POST', '/v1/workspaces/restart/tools/read_file', { path: 'later.txt' });
    expect(read.body.result.content).toBe('later');
    expect((await usage(key, 'groupBy=tool'))[0]).toMatchObject({
      group: 'write_file',
      calls: 1,
      errors: 0,
      bytesIn: pending.bytesIn,
    });
  });
});

describe('a crash', () => {
  it('leaves exactly one record per call, and an ok record for exactly the writes that landed', async () => {
    await server.call('PUT', '/v1/workspaces/crash');
    const key = await createKey(server, { role: 'agent', workspaces: ['crash'], approvalMode: 'auto' });
    let answered = 0;
    const writes = Array.from({ length: 300 }, (_, i) =>
      callApi(server.url, key.secret, 'POST', '/v1/workspaces/crash/tools/write_file', {
        path: `c${i}.txt`,
        content: 'x'.repeat(1000),
      }).then(
        () => (answered += 1),
        () => undefined,
      ),
    );
    await eventually(() => answered >= 50, { what: 'fifty writes to be answered', intervalMs: 5 });
    await server.kill();
    await Promise.all(writes);
    server = await startServer({ dataDir });
    const files = (await server.call('GET', '/v1/workspaces/crash/files')).body.entries.length;
    const [row] = await usage(key, 'groupBy=tool');
    expect(files).toBeGreaterThanOrEqual(50);
    // Every call that reached the server has one record; those whose write landed are not errors.
    expect(row!.calls).toBeLessThanOrEqual(300);
    expect(row!.calls - row!.errors).toBe(files);
  });
});

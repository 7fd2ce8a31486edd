// The usage meter on a real SQLite database: one record per call, totals by tool, workspace, key
// and day, and quotas that admit exactly their number of calls a period, on an injected clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolError } from '../../src/core/errors.ts';
import type { Quota } from '../../src/keys/key-store.ts';
import { DEFERRED_RECORD_MS, UsageMeter, type CallIdentity } from '../../src/metering/usage-meter.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';

const DAY = 86_400_000;
const MONDAY = Date.UTC(2026, 2, 2);

function meterAt(start = MONDAY + 9 * 3_600_000) {
  const clock = { ms: start };
  const db = SqliteDatabase.memory();
  const meter = new UsageMeter(db, () => clock.ms);
  const call = (tool: string, more: Partial<CallIdentity> = {}): CallIdentity => ({
    keyId: 'key_a',
    workspace: 'ws',
    tool,
    action: undefined,
    bytesIn: 10,
    startedAt: clock.ms,
    ...more,
  });
  /** The records committed so far, read from the table itself (a summary would commit those waiting). */
  const committed = () => db.query<{ n: number }>('SELECT COUNT(*) AS n FROM usage')[0]!.n;
  return { clock, meter, call, committed };
}

function refusal(action: () => unknown): ToolError | undefined {
  try {
    action();
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  return undefined;
}

const ok = (bytesOut = 20) => ({ outcome: 'ok', bytesOut, durationMs: 5 });
const everything = { from: 0, to: Number.MAX_SAFE_INTEGER };

describe('records', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('commits the record of a call that changed nothing within DEFERRED_RECORD_MS (≤ 50 ms), or at once when read', async () => {
    expect(DEFERRED_RECORD_MS).toBeLessThanOrEqual(50);
    vi.useFakeTimers();
    const { meter, call, committed } = meterAt();
    let settled = false;
    void meter.settle(call('read_file'), ok(), { billable: true, deferrable: true }).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(DEFERRED_RECORD_MS - 1);
    expect({ committed: committed(), settled }).toEqual({ committed: 0, settled: false });
    await vi.advanceTimersByTimeAsync(1);
    expect({ committed: committed(), settled }).toEqual({ committed: 1, settled: true });
    // One waiting is committed by whatever reads the records, before it reads them.
    void meter.settle(call('read_file'), ok(), { billable: true, deferrable: true });
    expect(meter.summary({ ...everything, groupBy: 'tool' })[0]!.calls).toBe(2);
    expect(committed()).toBe(2);
  });

  it('commits a record that must be durable at the next turn, with any deferred ones waiting', async () => {
    vi.useFakeTimers();
    const { meter, call, committed } = meterAt();
    void meter.settle(call('read_file'), ok(), { billable: true, deferrable: true });
    const durable = meter.settle(call('write_file'), ok(), { billable: true });
    await vi.advanceTimersByTimeAsync(0);
    await durable;
    expect(committed()).toBe(2);
  });

  it('keeps one record per settled call, totalled per tool (bash per action) with its errors and bytes', async () => {
    const { meter, call } = meterAt();
    await Promise.all([
      meter.settle(call('read_file'), ok(100), { billable: true }),
      meter.settle(call('read_file'), { outcome: 'not_found', bytesOut: 50, durationMs: 1 }, { billable: true }),
      meter.settle(call('bash', { action: 'exec' }), { ...ok(), processSeconds: 1.5 }, { billable: true }),
      meter.settle(
        call('write_file'),
        { outcome: 'tool_not_allowed', bytesOut: 80, durationMs: 0 },
        { billable: false },
      ),
    ]);
    expect(meter.summary({ ...everything, groupBy: 'tool' })).toEqual([
      { group: 'bash:exec', calls: 1, errors: 0, bytesIn: 10, bytesOut: 20, processSeconds: 1.5 },
      { group: 'read_file', calls: 2, errors: 1, bytesIn: 20, bytesOut: 150, processSeconds: 0 },
      { group: 'write_file', calls: 1, errors: 1, bytesIn: 10, bytesOut: 80, processSeconds: 0 },
    ]);
  });

  it('totals a day by its time range, and by key or workspace, narrowed to one key or a scope', async () => {
    const { clock, meter, call } = meterAt();
    await meter.settle(call('read_file'), ok(), { billable: true });
    await meter.settle(call('read_file', { keyId: 'key_b', workspace: 'other' }), ok(), { billable: true });
    clock.ms += DAY;
    await meter.settle(call('read_file'), ok(), { billable: true });
    await meter.settle(call('grep'), ok(), { billable: true });
    const day = (start: number) => ({ from: start, to: start + DAY });
    expect(meter.summary({ ...day(MONDAY), groupBy: 'tool' }).map((row) => [row.group, row.calls])).toEqual([
      ['read_file', 2],
    ]);
    expect(meter.summary({ ...day(MONDAY + DAY), groupBy: 'tool' }).map((row) => [row.group, row.calls])).toEqual([
      ['grep', 1],
      ['read_file', 1],
    ]);
    expect(meter.summary({ ...everything, groupBy: 'key' }).map((row) => [row.group, row.calls])).toEqual([
      ['key_a', 3],
      ['key_b', 1],
    ]);
    expect(meter.summary({ ...everything, groupBy: 'workspace' }).map((row) => [row.group, row.calls])).toEqual([
      ['other', 1],
      ['ws', 3],
    ]);
    expect(meter.summary({ ...everything, groupBy: 'workspace', keyId: 'key_b' }).map((row) => row.group)).toEqual([
      'other',
    ]);
    expect(meter.summary({ ...everything, groupBy: 'workspace', workspaces: ['ws'] }).map((row) => row.group)).toEqual([
      'ws',
    ]);
  });

  it('closes an admitted call once: a second outcome does not replace the first', () => {
    const { meter, call } = meterAt();
    const id = meter.admit({ id: 'key_a', quota: undefined }, call('write_file'), { usesProcessTime: false });
    meter.finish(id, ok(30));
    meter.finish(id, { outcome: 'internal', bytesOut: 99, durationMs: 1 });
    expect(meter.summary({ ...everything, groupBy: 'tool' })).toEqual([
      { group: 'write_file', calls: 1, errors: 0, bytesIn: 10, bytesOut: 30, processSeconds: 0 },
    ]);
  });

  it('after a restart, counts a call cut off before its answer as ok if its effect landed, else interrupted', () => {
    const { meter, call } = meterAt();
    const landed = meter.admit({ id: 'key_a', quota: undefined }, call('write_file'), { usesProcessTime: false });
    meter.markEffect(landed);
    meter.admit({ id: 'key_a', quota: undefined }, call('apply_patch'), { usesProcessTime: false });
    const waiting = meter.admit({ id: 'key_a', quota: undefined }, call('bash', { action: 'exec' }), {
      usesProcessTime: true,
    });
    meter.awaitApproval(waiting, 'apr_1');
    expect(meter.closeInterrupted()).toBe(2);
    const rows = meter.summary({ ...everything, groupBy: 'tool' });
    expect(rows.map((row) => [row.group, row.calls, row.errors])).toEqual([
      ['apply_patch', 1, 1],
      ['bash:exec', 1, 0],
      ['write_file', 1, 0],
    ]);
  });
});

describe('quotas', () => {
  it('admits exactly the calls of a quota in its day, refuses the next until the day renews', () => {
    const { clock, meter, call } = meterAt();
    const key = { id: 'key_a', quota: { calls: 3, period: 'day' } satisfies Quota };
    for (let i = 0; i < 3; i += 1) meter.finish(meter.admit(key, call('read_file'), { usesProcessTime: false }), ok());
    const refused = refusal(() => meter.admit(key, call('read_file'), { usesProcessTime: false }));
    expect(refused?.code).toBe('quota_exceeded');
    expect(refused?.details).toMatchObject({
      quota: 'calls',
      limit: 3,
      used: 3,
      resetsAt: new Date(MONDAY + DAY).toISOString(),
    });
    // Another key's calls are its own.
    expect(
      refusal(() =>
        meter.admit({ id: 'key_b', quota: key.quota }, call('read_file', { keyId: 'key_b' }), {
          usesProcessTime: false,
        }),
      ),
    ).toBeUndefined();
    clock.ms = MONDAY + DAY;
    expect(refusal(() => meter.admit(key, call('read_file'), { usesProcessTime: false }))).toBeUndefined();
  });

  it('does not count calls refused before admission against the quota', async () => {
    const { meter, call } = meterAt();
    const key = { id: 'key_a', quota: { calls: 1, period: 'month' } satisfies Quota };
    await meter.settle(
      call('write_file'),
      { outcome: 'invalid_argument', bytesOut: 10, durationMs: 0 },
      { billable: false },
    );
    expect(refusal(() => meter.admit(key, call('read_file'), { usesProcessTime: false }))).toBeUndefined();
  });

  it('spends process seconds as a started process accrues them, and stops only calls that use process time', () => {
    const { meter, call } = meterAt();
    const key = { id: 'key_a', quota: { processSeconds: 10, period: 'day' } satisfies Quota };
    const id = meter.admit(key, call('bash', { action: 'start' }), { usesProcessTime: true });
    meter.finish(id, { ...ok(), processId: 'proc_1' });
    expect(meter.openProcesses()).toEqual([{ workspace: 'ws', processId: 'proc_1' }]);
    expect(meter.processAccrued('proc_1', 4)).toEqual([
      { keyId: 'key_a', startedAt: MONDAY + 9 * 3_600_000, added: 4 },
    ]);
    expect(meter.processSecondsSpent('key_a', key.quota)).toBe(false);
    expect(meter.processEnded('proc_1', 10.5)).toEqual([expect.objectContaining({ added: 6.5 })]);
    // Counted once: a late report adds nothing.
    expect(meter.processEnded('proc_1', 12)).toEqual([]);
    expect(meter.openProcesses()).toEqual([]);
    expect(meter.processSecondsSpent('key_a', key.quota)).toBe(true);
    expect(
      refusal(() => meter.admit(key, call('bash', { action: 'exec' }), { usesProcessTime: true }))?.details,
    ).toMatchObject({ quota: 'processSeconds', limit: 10 });
    expect(refusal(() => meter.admit(key, call('read_file'), { usesProcessTime: false }))).toBeUndefined();
    expect(
      meter.summary({ ...everything, groupBy: 'tool' }).find((row) => row.group === 'bash:start')?.processSeconds,
    ).toBe(10.5);
  });
});

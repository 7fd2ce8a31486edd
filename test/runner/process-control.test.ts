// The runner's side of live control: each stdin chunk written once and in order, a stop applied once, a stale lease let go.
import { describe, expect, it, vi } from 'vitest';
import type { ControlReply, LeasedJob } from '../../src/contract/runner-protocol.ts';
import { StaleLeaseError, type RunnerClient } from '../../src/runner/runner-client.ts';
import { ProcessControl } from '../../src/runner/node/process-control.ts';
import { eventually } from '../support/eventually.ts';

const JOB = { processId: 'proc_1', workspace: 'ws', token: 7, leaseMs: 15_000 } as LeasedJob;

interface Sent {
  stdinAck: number;
  stopAck: boolean;
  waitMs: number;
  signal: AbortSignal | undefined;
}

/** A server stand-in: answers each control request with the next scripted reply (or error), then holds the last one open. */
function scriptedClient(replies: (ControlReply | Error)[]) {
  const sent: Sent[] = [];
  let held: (() => void) | undefined;
  const client = {
    heartbeat(
      _job: unknown,
      _token: number,
      stdinAck: number,
      wait?: { waitMs: number; stopAck: boolean; signal?: AbortSignal },
    ): Promise<ControlReply> {
      sent.push({ stdinAck, stopAck: wait!.stopAck, waitMs: wait!.waitMs, signal: wait!.signal });
      const next = replies.shift();
      if (next instanceof Error) return Promise.reject(next);
      if (next !== undefined) return Promise.resolve(next);
      return new Promise((_resolve, reject) => {
        held = () => reject(new Error('aborted'));
        wait!.signal?.addEventListener('abort', held);
      });
    },
  };
  return { client: client as unknown as RunnerClient, sent, isHeld: () => held !== undefined };
}

function recordingCommand() {
  const calls: string[] = [];
  return {
    calls,
    command: {
      write: (data: string) => calls.push(`write ${data}`),
      endInput: () => calls.push('eof'),
      stop: (graceMs: number) => calls.push(`stop ${graceMs}`),
    },
  };
}

describe('process control on the runner', () => {
  it('writes each stdin chunk once and in order, though a lost reply makes the server send it again', async () => {
    const chunk = (seq: number, data: string, eof = false) => ({ seq, data, eof });
    const { client, sent, isHeld } = scriptedClient([
      { stdin: [chunk(1, 'a\n')], stop: null },
      { stdin: [chunk(1, 'a\n'), chunk(2, 'b\n')], stop: null },
      new Error('the connection dropped'),
      { stdin: [chunk(2, 'b\n'), chunk(3, 'c\n', true)], stop: null },
    ]);
    const { command, calls } = recordingCommand();
    const control = new ProcessControl(client, JOB, command, 5, () => undefined);
    await eventually(isHeld, { what: 'the script to be played out', intervalMs: 1 });
    control.close();
    expect(calls).toEqual(['write a\n', 'write b\n', 'write c\n', 'eof']);
    // Every request names the last chunk applied, so the server drops only what arrived.
    expect(sent.map((request) => request.stdinAck)).toEqual([0, 1, 2, 2, 3]);
    expect(sent.every((request) => request.waitMs === 5)).toBe(true);
  });

  it('applies a stop once, then says it has it so the server waits again', async () => {
    const { client, sent, isHeld } = scriptedClient([
      { stdin: [], stop: { graceMs: 500 } },
      { stdin: [], stop: { graceMs: 500 } },
    ]);
    const { command, calls } = recordingCommand();
    const control = new ProcessControl(client, JOB, command, 5, () => undefined);
    await eventually(isHeld, { what: 'the script to be played out', intervalMs: 1 });
    expect(control.stopRequested).toBe(true);
    expect(calls).toEqual(['stop 500']);
    expect(sent.map((request) => request.stopAck)).toEqual([false, true, true]);
    control.close();
    expect(sent.at(-1)!.signal?.aborted).toBe(true);
  });

  it('lets go of a job whose lease is stale, and sends nothing more', async () => {
    const stale = new StaleLeaseError('the lease token is stale');
    const { client, sent } = scriptedClient([stale]);
    const { command } = recordingCommand();
    let released: unknown;
    // Every timer it sets runs to its end, so a request it would send after any pause is sent by then.
    vi.useFakeTimers();
    try {
      new ProcessControl(client, JOB, command, 5, (error) => (released = error));
      await vi.runAllTimersAsync();
    } finally {
      vi.useRealTimers();
    }
    expect(released).toBe(stale);
    expect(sent).toHaveLength(1);
  });
});

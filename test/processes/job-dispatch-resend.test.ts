// The Cloudflare home's hand-off of queued jobs to the Queue (src/cloudflare/job-dispatch.ts): a job
// whose message never reached a dispatcher shard is sent again while it still waits, so a lost
// message does not leave it queued for ever; a job sent recently, or no longer queued, is not.
// The Queue binding is a recording stand-in (its real driver is job-dispatch.test.ts's, in workerd);
// the clock is injected.
import { describe, expect, it } from 'vitest';
import { JobDispatch, RESEND_MS } from '../../src/cloudflare/job-dispatch.ts';
import type { JobMessage } from '../../src/contract/object-calls.ts';
import { memoryStore, newProcess, RUNNER } from './process-fixtures.ts';

function setUp() {
  const { store, db } = memoryStore();
  let now = 1_000_000;
  const sent: JobMessage[] = [];
  let failing = false;
  const jobs = {
    async send(message: JobMessage) {
      if (failing) throw new Error('the Queue is unreachable');
      sent.push(message);
    },
  };
  const dispatch = new JobDispatch(db, store, { JOBS: jobs }, () => now);
  return {
    store,
    dispatch,
    sent,
    advance: (ms: number) => (now += ms),
    fail: (value: boolean) => (failing = value),
  };
}

describe('job hand-off to the Queue', () => {
  it('sends a still-queued job again once RESEND_MS passed since its message, and not before', async () => {
    const { store, dispatch, sent, advance } = setUp();
    const job = store.create(newProcess({ mode: 'exec' }));
    await dispatch.send();
    expect(sent.map((message) => message.jobId)).toEqual([job.id]);
    // The message is lost on its way; sends before RESEND_MS add nothing.
    advance(RESEND_MS - 1);
    await dispatch.send();
    expect(sent).toHaveLength(1);
    advance(1);
    await dispatch.send();
    expect(sent.map((message) => message.jobId)).toEqual([job.id, job.id]);
    // Leased: no longer queued, so never sent again.
    expect(store.lease('runner-a', RUNNER)?.processId).toBe(job.id);
    advance(RESEND_MS);
    await dispatch.send();
    expect(sent).toHaveLength(2);
  });

  it('retries a send that failed at the next one, and then waits RESEND_MS again', async () => {
    const { store, dispatch, sent, advance, fail } = setUp();
    const job = store.create(newProcess());
    fail(true);
    await dispatch.send();
    expect(sent).toEqual([]);
    fail(false);
    await dispatch.send();
    expect(sent.map((message) => message.jobId)).toEqual([job.id]);
    advance(RESEND_MS / 2);
    await dispatch.send();
    expect(sent).toHaveLength(1);
  });
});

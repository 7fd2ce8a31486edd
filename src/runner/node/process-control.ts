// Holds one control request open per running process, so stdin and a stop reach the command as soon as they are written.
import type { ControlReply, LeasedJob } from '../../contract/runner-protocol.ts';
import { StaleLeaseError, type RunnerClient } from '../runner-client.ts';
import type { RunningCommand } from './running-command.ts';

/**
 * The control request is a heartbeat the server holds until stdin or a stop is written (or
 * `waitMs` passes), so it also renews the lease: one goes out again as soon as one is answered.
 */
export class ProcessControl {
  /** Whether a stop arrived: the command then ends `stopped`. */
  stopRequested = false;
  /** The last stdin chunk applied: a lost reply is answered again, and each chunk is written once. */
  private stdinAck = 0;
  private readonly closed = new AbortController();

  constructor(
    private readonly client: RunnerClient,
    private readonly job: LeasedJob,
    private readonly command: Pick<RunningCommand, 'write' | 'endInput' | 'stop'>,
    /** How long one request may wait, and the pause after one that failed. */
    private readonly waitMs: number,
    /** Called when the server no longer lets this runner report on the job. */
    private readonly onStale: (error: StaleLeaseError) => void,
  ) {
    void this.run();
  }

  /** Ends the waiting request: the command has ended, or the runner stops. */
  close(): void {
    this.closed.abort();
  }

  private async run(): Promise<void> {
    const { signal } = this.closed;
    while (!signal.aborted) {
      try {
        const wait = { waitMs: this.waitMs, stopAck: this.stopRequested, signal };
        this.apply(await this.client.heartbeat(this.job, this.job.token, this.stdinAck, wait));
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof StaleLeaseError) return this.onStale(error);
        // The client has retried an unreachable server already; any other refusal must not spin.
        await new Promise((resolve) => setTimeout(resolve, this.waitMs));
      }
    }
  }

  private apply(reply: ControlReply): void {
    for (const chunk of reply.stdin) {
      if (chunk.seq <= this.stdinAck) continue;
      this.stdinAck = chunk.seq;
      if (chunk.data) this.command.write(chunk.data);
      if (chunk.eof) this.command.endInput();
    }
    if (reply.stop && !this.stopRequested) {
      this.stopRequested = true;
      this.command.stop(reply.stop.graceMs);
    }
  }
}

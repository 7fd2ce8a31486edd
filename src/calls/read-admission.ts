// Reads held open (log streams) admitted through the gate as one call each, recorded when they end or the server stops.
import { ToolError } from '../core/errors.ts';
import type { ApiKey } from '../keys/key-store.ts';
import type { CallIdentity, CallOutcome, UsageMeter } from '../metering/usage-meter.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { CallAllowance } from './call-allowance.ts';
import { checkCall, type Admitted, type CallChecks } from './call-checks.ts';

export interface ReadRequest {
  key: ApiKey;
  workspace: string;
  tool: string;
  args: unknown;
  /** Called when the server stops while the read is open: it must end the read (and `close` it) at once. */
  onStop: () => void;
}

/** A read admitted by `admitRead`: the workspace it reads, and how its one usage record is written when it ends (once; later calls do nothing). */
export interface AdmittedRead {
  workspace: Workspace;
  /** Whether the key the read was admitted with is still live (not revoked): asked again as it goes on. */
  keyLive(): Promise<boolean>;
  close(outcome: string, bytesOut: number): void;
}

export interface ReadAdmissionOptions {
  checks: CallChecks;
  allowance: CallAllowance;
  meter: UsageMeter;
  /** Whether a key is still live (not revoked). */
  keyLive: (key: ApiKey) => Promise<boolean>;
  now: () => number;
}

export class ReadAdmission {
  /** How to end each read admitted that is still open (see stopAll). */
  private readonly openReads = new Set<() => void>();

  constructor(private readonly options: ReadAdmissionOptions) {}

  /**
   * Admits a read through the same checks as a call of `tool` with `args`: scope, allowlist,
   * policy, rate and quota. It is one call with one usage record, written by `close` when the read
   * ends; a refusal is recorded at once and thrown. A read cannot wait for an approver, so a
   * policy that asks for one refuses it.
   */
  async admit(request: ReadRequest): Promise<AdmittedRead> {
    const { allowance, meter, now } = this.options;
    const identity: CallIdentity = {
      keyId: request.key.id,
      workspace: request.workspace,
      tool: request.tool,
      action: undefined,
      bytesIn: 0,
      startedAt: now(),
    };
    let usageId: number | undefined;
    let admitted: Admitted;
    try {
      admitted = await checkCall(
        this.options.checks,
        { ...request, readArguments: async () => ({ value: request.args, bytes: 0 }) },
        identity,
      );
      if (admitted.needsApproval) {
        const name = identity.action === undefined ? request.tool : `${request.tool}:${identity.action}`;
        throw new ToolError(
          'forbidden',
          `This key's policy asks an approver before each ${name}, and a stream cannot wait for one; call ${request.tool} instead.`,
          { tool: request.tool, ...(identity.action === undefined ? {} : { action: identity.action }) },
        );
      }
      await allowance.take(request.key, admitted.perMinute, false);
      if (request.key.quota !== undefined) usageId = allowance.openRecord(request.key, identity, false);
    } catch (error) {
      allowance.refused(identity, error);
      throw error;
    }
    let closed = false;
    this.openReads.add(request.onStop);
    return {
      workspace: admitted.workspace,
      keyLive: () => this.options.keyLive(request.key),
      close: (outcome, bytesOut) => {
        if (closed) return;
        closed = true;
        this.openReads.delete(request.onStop);
        const ended: CallOutcome = { outcome, bytesOut, durationMs: now() - identity.startedAt };
        if (usageId !== undefined) meter.finish(usageId, ended);
        else void meter.settle(identity, ended, { billable: true, deferrable: true });
      },
    };
  }

  /** Ends every read still open, so their records are among those committed when the server stops. */
  stopAll(): void {
    for (const stopRead of [...this.openReads]) stopRead();
  }
}

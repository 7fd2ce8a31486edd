// Process seconds of started processes: counted on their calls' usage records as they run and
// when they end, told to a home's quota ledger, and a process whose key's processSeconds quota
// is spent meanwhile is stopped.
import type { KeyLookup } from '../keys/key-lookup.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { QuotaLedger } from './quota-ledger.ts';
import type { UsageMeter } from './usage-meter.ts';
import { readSetting } from '../contract/settings.ts';

/** How often running processes' seconds are counted (docs/api.md: at least every 30 s). */
export const DEFAULT_ACCRUAL_MS = readSetting({}, 'TOOLGATE_PROCESS_ACCRUAL_MS', 'node');
/** How long a process stopped for a spent quota gets between SIGTERM and SIGKILL. */
const QUOTA_STOP_GRACE_MS = 2_000;

export interface ProcessTimeParts {
  meter: UsageMeter;
  processes: ProcessStore;
  keys: KeyLookup;
  quotaLedger?: QuotaLedger;
  now: () => number;
  log: (message: string, error?: unknown) => void;
  accrualMs?: number;
}

export class ProcessTime {
  private stopWatch: (() => void) | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private accruing: Promise<void> | undefined;

  constructor(private readonly parts: ProcessTimeParts) {}

  /** Counts the processes that ended while no server watched, then follows every change and counts running ones periodically. */
  start(): void {
    const { meter, processes } = this.parts;
    for (const open of meter.openProcesses()) this.count(open.workspace, open.processId);
    this.stopWatch = processes.onChange((id) => {
      const workspace = meter.openProcessWorkspace(id);
      if (workspace !== undefined) this.count(workspace, id);
    });
    this.timer = setInterval(() => void this.accrue(), this.parts.accrualMs ?? DEFAULT_ACCRUAL_MS);
    this.timer.unref?.();
  }

  stop(): void {
    this.stopWatch?.();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A process that a call started, counted at once when it already ended. */
  countStarted(processId: string): void {
    this.count(this.parts.meter.openProcessWorkspace(processId) ?? '', processId);
  }

  /** Tells the quota ledger (when there is one) process seconds a call used; a failure is logged, never the call's. */
  report(keyId: string, startedAt: number, seconds: number | undefined): void {
    const { quotaLedger } = this.parts;
    if (!quotaLedger || !seconds) return;
    void quotaLedger
      .addProcessSeconds(keyId, startedAt, seconds)
      .catch((error: unknown) =>
        this.parts.log(`could not add ${seconds} process seconds to the quota of key ${keyId}`, error),
      );
  }

  /**
   * Counts the seconds each running process has run so far on its call's record (so quotas see
   * them), and stops a process whose key's processSeconds quota they spent. Runs one at a time.
   */
  accrue(): Promise<void> {
    this.accruing ??= this.accrueAll().finally(() => (this.accruing = undefined));
    return this.accruing;
  }

  private async accrueAll(): Promise<void> {
    const { meter, processes, keys } = this.parts;
    for (const open of meter.openProcesses()) {
      const record = processes.get(open.workspace, open.processId);
      if (record === undefined || record.startedAt === null || record.endedAt !== null) continue;
      const seconds = elapsedSeconds(record.startedAt, this.parts.now());
      for (const call of meter.processAccrued(open.processId, seconds)) {
        this.report(call.keyId, call.startedAt, call.added);
        try {
          const key = await keys.get(call.keyId);
          if (key?.quota?.processSeconds === undefined) continue;
          const spent = this.parts.quotaLedger
            ? await this.parts.quotaLedger.processSecondsSpent(key)
            : meter.processSecondsSpent(key.id, key.quota);
          if (spent) processes.requestStop(open.workspace, open.processId, QUOTA_STOP_GRACE_MS);
        } catch (error) {
          this.parts.log(
            `could not check the processSeconds quota of key ${call.keyId} for process ${open.processId}`,
            error,
          );
        }
      }
    }
  }

  private count(workspace: string, processId: string): void {
    const { meter, processes } = this.parts;
    const record = processes.get(workspace, processId);
    if (record === undefined) return void meter.processEnded(processId, 0);
    if (record.endedAt === null) return;
    const seconds =
      record.startedAt === null ? 0 : Math.max(0, (Date.parse(record.endedAt) - Date.parse(record.startedAt)) / 1000);
    for (const call of meter.processEnded(processId, seconds)) this.report(call.keyId, call.startedAt, call.added);
  }
}

function elapsedSeconds(startedAt: string, now: number): number {
  return Math.max(0, (now - Date.parse(startedAt)) / 1000);
}

// Runs the blob sweeper every interval on the Node home: one sweep at a time, the next starting
// `intervalMs` after the last ended; a failed sweep is logged and the next one tries again.
import type { Workspaces } from '../workspace/workspaces.ts';

export function startBlobSweeps(
  workspaces: Workspaces,
  options: { graceMs: number; intervalMs: number },
  log: (message: string, error?: unknown) => void,
): { stop(): void } {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      workspaces
        .sweepBlobs(options.graceMs)
        .catch((error: unknown) => {
          if (!stopped) log('could not sweep unreferenced file contents; the next sweep tries again', error);
        })
        .finally(schedule);
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

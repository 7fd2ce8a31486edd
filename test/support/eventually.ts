// Waits for something a test cannot be told about directly: polls a check until it holds, or
// fails after a generous deadline with what was waited for and the check's last error.

export interface EventuallyOptions {
  /** What is waited for, as the failure states it: "the process to exit". */
  what?: string;
  /** The deadline is a safety net against a hang, never the thing a test asserts. */
  timeoutMs?: number;
  intervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_INTERVAL_MS = 25;

/** A value that means "not yet": the check holds once it answers anything else. */
type NotYet = false | undefined | null;

/**
 * Calls `check` until it answers a value other than false, undefined or null, without throwing
 * (so an `expect` inside it is an assertion that must come to hold); answers that value.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, NotYet>> {
  const { what = 'the condition to hold', timeoutMs = DEFAULT_TIMEOUT_MS, intervalMs = DEFAULT_INTERVAL_MS } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined && value !== null) return value as Exclude<T, NotYet>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const last =
        lastError === undefined
          ? 'the check kept answering that it does not hold yet'
          : `its last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`Waited ${timeoutMs} ms for ${what}, in vain; ${last}.`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

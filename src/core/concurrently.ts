// Runs one async step per item with at most `limit` in flight: enough to overlap round trips without a burst of thousands.

/**
 * Runs `step` over the items, `limit` at a time. After a failure no further item is started, and
 * the answer (the first failure) waits for those already running: nothing is left working once the
 * caller has moved on.
 */
export async function concurrently<T>(
  items: readonly T[],
  limit: number,
  step: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const workers = await Promise.allSettled(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (!failed && next < items.length) {
        try {
          await step(items[next++]!);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
  const failure = workers.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}

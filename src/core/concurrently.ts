// Runs one async step per item with at most `limit` in flight: enough to overlap store round trips without a burst of thousands.

export async function concurrently<T>(
  items: readonly T[],
  limit: number,
  step: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next]!;
      next += 1;
      await step(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

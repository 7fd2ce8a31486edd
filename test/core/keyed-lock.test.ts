// KeyedLock: work on one key runs in turn; runMany takes the turns of several keys at once.
import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../src/core/keyed-lock.ts';

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('KeyedLock', () => {
  it('runs the work of one key in turn, and of other keys alongside', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const first = gate();
    const a1 = lock.run('a', async () => {
      await first.opened;
      order.push('a1');
    });
    const a2 = lock.run('a', async () => {
      order.push('a2');
    });
    await lock.run('b', async () => {
      order.push('b');
    });
    first.open();
    await Promise.all([a1, a2]);
    expect(order).toEqual(['b', 'a1', 'a2']);
  });

  it('runMany waits for every key it names, holds them all, and never waits in a cycle', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const held = gate();
    const onB = lock.run('b', async () => {
      await held.opened;
      order.push('b held');
    });
    const many = lock.runMany(['a', 'b', 'c', 'a'], async () => {
      order.push('many');
    });
    const afterOnA = lock.run('a', async () => {
      order.push('a after');
    });
    // Two runMany callers naming the same keys in opposite orders both finish.
    const crossed = Promise.all([
      lock.runMany(['x', 'y'], async () => order.push('xy')),
      lock.runMany(['y', 'x'], async () => order.push('yx')),
    ]);
    await crossed;
    expect(order).toEqual(['xy', 'yx']);
    held.open();
    await Promise.all([onB, many, afterOnA]);
    expect(order).toEqual(['xy', 'yx', 'b held', 'many', 'a after']);
  });
});

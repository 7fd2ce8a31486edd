// The blob cache's bound and its choice of what to keep.
import { describe, expect, it } from 'vitest';
import { BlobCache } from '../../src/workspace/blob-cache.ts';

const blob = (size: number) => new Uint8Array(size);

describe('BlobCache', () => {
  it('never holds more than its budget, dropping the oldest unread blobs first', () => {
    const cache = new BlobCache(1000);
    for (let i = 0; i < 10; i += 1) cache.set(`b${i}`, blob(100));
    expect(cache.size).toEqual({ blobs: 10, bytes: 1000 });
    cache.set('b10', blob(100));
    expect(cache.size).toEqual({ blobs: 10, bytes: 1000 });
    expect(cache.get('b0')).toBeUndefined();
    expect(cache.get('b1')).toBeDefined();
    for (let i = 11; i < 100; i += 1) {
      cache.set(`b${i}`, blob(37 + (i % 50)));
      expect(cache.size.bytes).toBeLessThanOrEqual(1000);
    }
  });

  it('keeps a blob read since it was stored over older and newer unread ones', () => {
    const cache = new BlobCache(1000);
    for (let i = 0; i < 10; i += 1) cache.set(`b${i}`, blob(100));
    expect(cache.get('b0')).toBeDefined();
    expect(cache.get('b5')).toBeDefined();
    // Three new blobs push three out: b1, b2, b3, not the read b0.
    for (const key of ['n0', 'n1', 'n2']) cache.set(key, blob(100));
    expect(['b0', 'b1', 'b2', 'b3', 'b4', 'b5'].map((key) => cache.has(key))).toEqual([
      true,
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('counts a read once: a blob not read again goes when the pass reaches it a second time', () => {
    const cache = new BlobCache(1000);
    for (let i = 0; i < 10; i += 1) cache.set(`b${i}`, blob(100));
    cache.get('b0');
    for (let i = 0; i < 10; i += 1) cache.set(`n${i}`, blob(100));
    expect(cache.has('b0')).toBe(true);
    expect(cache.has('b1')).toBe(false);
    cache.set('n10', blob(100));
    expect(cache.has('b0')).toBe(false);
    expect(cache.size).toEqual({ blobs: 10, bytes: 1000 });
  });

  it('refuses a blob over an eighth of the budget, and stores a key once', () => {
    const cache = new BlobCache(800);
    cache.set('big', blob(101));
    expect(cache.get('big')).toBeUndefined();
    cache.set('a', blob(100));
    cache.set('a', blob(50));
    expect(cache.size).toEqual({ blobs: 1, bytes: 100 });
  });
});

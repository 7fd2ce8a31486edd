// What an edge thread keeps of the contents it was sent (edge-thread-contents.ts): a workspace's
// next command is answered from it, another workspace's never, and a command changing the bytes
// its filesystem gave it changes nothing kept (the filesystem hands out copies, EdgeFs.readFileBuffer).
import { describe, expect, it } from 'vitest';
import { KeptContents } from '../../src/node/edge-thread-contents.ts';
import { EdgeFs } from '../../src/tools/edge-bash/edge-fs.ts';
import type { ManifestEntry } from '../../src/workspace/manifest-entry.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array) => new TextDecoder().decode(value);

function entry(path: string, blob: string): ManifestEntry {
  return { path, type: 'file', blob, target: null, size: 1, version: 1 };
}

/** The server thread's side: each blob's content by hash (as one store holds it), with the calls counted. */
function sender(contents: Record<string, string>) {
  const sent = { one: 0, many: 0, files: 0 };
  return {
    sent,
    reader: {
      read: async (_path: string, file: ManifestEntry) => {
        sent.one += 1;
        sent.files += 1;
        return bytes(contents[file.blob!]!);
      },
      readMany: async (files: readonly ManifestEntry[]) => {
        sent.many += 1;
        sent.files += files.length;
        return files.map((file) => bytes(contents[file.blob!]!));
      },
    },
  };
}

describe('KeptContents', () => {
  it("answers a workspace's next command from what it was sent, and asks only for the rest", async () => {
    const kept = new KeptContents(1024 * 1024);
    const first = sender({ h1: 'one', h2: 'two' });
    const reader = kept.reader('store-a', first.reader);
    expect((await reader.readMany([entry('a', 'h1'), entry('b', 'h2')])).map(text)).toEqual(['one', 'two']);
    expect(first.sent).toEqual({ one: 0, many: 1, files: 2 });

    const second = sender({ h1: 'one', h2: 'two', h3: 'three' });
    const again = kept.reader('store-a', second.reader);
    expect((await again.readMany([entry('a', 'h1'), entry('c', 'h3'), entry('b', 'h2')])).map(text)).toEqual([
      'one',
      'three',
      'two',
    ]);
    expect(text(await again.read('b', entry('b', 'h2')))).toBe('two');
    // Only h3 crossed: one call, one file.
    expect(second.sent).toEqual({ one: 0, many: 1, files: 1 });
  });

  it("never answers one workspace's command with what another's was sent, even for the same hash", async () => {
    const kept = new KeptContents(1024 * 1024);
    await kept.reader('store-a', sender({ h1: 'tenant a' }).reader).read('a', entry('a', 'h1'));
    const other = sender({ h1: 'tenant b' });
    expect(text(await kept.reader('store-b', other.reader).read('a', entry('a', 'h1')))).toBe('tenant b');
    expect(other.sent.files).toBe(1);
    // Without a scope nothing is kept or answered.
    const unscoped = sender({ h1: 'plain' });
    expect(text(await kept.reader(undefined, unscoped.reader).read('a', entry('a', 'h1')))).toBe('plain');
    expect(unscoped.sent.files).toBe(1);
  });

  it('gives a command copies: bytes it changes in place change nothing kept, nor what it or the next command reads', async () => {
    const kept = new KeptContents(1024 * 1024);
    const files = { 'a.txt': 'h1', 'b.txt': 'h2' };
    const commandFs = () => {
      const fs = new EdgeFs({ reader: kept.reader('s', sender({ h1: 'abc', h2: 'def' }).reader) });
      fs.mkdirSync('/w');
      fs.addEntries(
        '/w',
        Object.entries(files).map(([path, blob]) => entry(path, blob)),
      );
      return fs;
    };
    const first = commandFs();
    (await first.readFileBuffer('/w/a.txt')).fill(0x7a);
    // b.txt arrives with a.txt's directory, together: the kept array, shared.
    (await first.readFileBuffer('/w/b.txt')).fill(0x78);
    expect([await first.readFile('/w/a.txt'), await first.readFile('/w/b.txt')]).toEqual(['abc', 'def']);
    const next = commandFs();
    expect(await next.readFile('/w/a.txt')).toBe('abc');
    expect(text(await next.readFileBuffer('/w/b.txt'))).toBe('def');
    expect(
      (await kept.reader('s', sender({}).reader).readMany([entry('a', 'h1'), entry('b', 'h2')])).map(text),
    ).toEqual(['abc', 'def']);
  });
});

// The runner's file-writing threads: files created exactly as asked, never through a planted link.
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobFiles } from '../../src/runner/node/blob-files.ts';
import { FileWriters } from '../../src/runner/node/file-writers.ts';
import { sha256 } from '../../src/runner/node/blob-files.ts';
import { stampFrom } from '../../src/runner/node/mirror-disk.ts';
import type { MirrorEntry } from '../../src/runner/node/mirror-changes.ts';
import { WorkspaceMirror } from '../../src/runner/node/workspace-mirror.ts';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-writers-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
function pool(): FileWriters {
  const writers = new FileWriters();
  cleanup.push(() => writers.close());
  return writers;
}

describe('FileWriters', () => {
  it('creates files from views of one buffer and from cache files, answering their stamps', async () => {
    const dir = tempDir();
    // Three files in one backing buffer, at offsets other than 0, as a batch answer holds them.
    const batch = new TextEncoder().encode('xxalphabetagammayy');
    const views = [batch.subarray(2, 7), batch.subarray(7, 11), batch.subarray(11, 16)];
    writeFileSync(join(dir, 'cached'), 'from the cache');
    const results = await pool().create([
      { host: join(dir, 'a'), bytes: views[0]! },
      { host: join(dir, 'b'), bytes: views[1]! },
      { host: join(dir, 'c'), source: join(dir, 'cached') },
      { host: join(dir, 'd'), bytes: views[2]! },
    ]);
    expect(['a', 'b', 'c', 'd'].map((name) => readFileSync(join(dir, name), 'utf8'))).toEqual([
      'alpha',
      'beta',
      'from the cache',
      'gamma',
    ]);
    expect(results).toEqual(['a', 'b', 'c', 'd'].map((name) => ({ stamp: stampFrom(lstatSync(join(dir, name))) })));
    // The caller's buffer is intact: only copies went to the threads.
    expect(new TextDecoder().decode(batch)).toBe('xxalphabetagammayy');
  });

  it('refuses a path already taken, a planted link included, without following it', async () => {
    const dir = tempDir();
    const outside = tempDir();
    symlinkSync(join(outside, 'victim'), join(dir, 'planted'));
    writeFileSync(join(dir, 'taken'), 'old');
    const results = await pool().create([
      { host: join(dir, 'planted'), bytes: new TextEncoder().encode('evil') },
      { host: join(dir, 'taken'), bytes: new TextEncoder().encode('new') },
      { host: join(dir, 'missing-parent', 'x'), bytes: new TextEncoder().encode('x') },
      { host: join(dir, 'fine'), bytes: new TextEncoder().encode('fine') },
    ]);
    expect(results.map((result) => ('code' in result ? result.code : 'created'))).toEqual([
      'EEXIST',
      'EEXIST',
      'ENOENT',
      'created',
    ]);
    expect(() => lstatSync(join(outside, 'victim'))).toThrow();
    expect(readlinkSync(join(dir, 'planted'))).toBe(join(outside, 'victim'));
    expect(readFileSync(join(dir, 'taken'), 'utf8')).toBe('old');
    expect(readFileSync(join(dir, 'fine'), 'utf8')).toBe('fine');
  });

  it('spreads many files over the threads and answers them in order', async () => {
    const dir = tempDir();
    for (let d = 0; d < 10; d += 1) mkdirSync(join(dir, `d${d}`));
    const files = Array.from({ length: 1000 }, (_, i) => ({
      host: join(dir, `d${i % 10}`, `f${i}`),
      bytes: new TextEncoder().encode(`file ${i}\n`),
    }));
    const results = await pool().create(files);
    expect(results).toHaveLength(1000);
    for (const [i, file] of files.entries()) {
      expect(readFileSync(file.host, 'utf8')).toBe(`file ${i}\n`);
      expect(results[i]).toEqual({ stamp: stampFrom(lstatSync(file.host)) });
    }
  });

  it('leaves the mirror to create files itself once a thread has died', async () => {
    const writers = pool();
    await writers.create([{ host: join(tempDir(), 'warm'), bytes: new Uint8Array([1]) }]);
    // A thread dying under the runner (out of memory, killed): the pool stops taking work.
    await (writers as unknown as { workers: { terminate(): Promise<number> }[] }).workers[0]!.terminate();
    await expect.poll(() => writers.usable).toBe(false);
    await expect(writers.create([{ host: join(tempDir(), 'x'), bytes: new Uint8Array([1]) }])).rejects.toThrow(
      /file-writing thread/,
    );

    const content = new TextEncoder().encode('still written');
    const entries: MirrorEntry[] = [
      { path: 'src', type: 'dir', blob: null, target: null, version: 1 },
      { path: 'src/a.txt', type: 'file', blob: sha256(content), target: null, version: 2, size: content.byteLength },
    ];
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()), writers);
    await mirror.materialise(
      entries,
      async () => content,
      async (hashes) => new Map(hashes.map((hash) => [hash, content])),
    );
    expect(readFileSync(join(mirror.root, 'src/a.txt'), 'utf8')).toBe('still written');
  });
});

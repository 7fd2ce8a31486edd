// The runner-local workspace copy: materialise from a manifest, scan what a command changed.
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlobFiles } from '../../src/runner/node/blob-files.ts';
import { FileWriters } from '../../src/runner/node/file-writers.ts';
import { sha256 } from '../../src/runner/node/blob-files.ts';
import { fromDiskTarget, toDiskTarget } from '../../src/runner/node/mirror-disk.ts';
import type { MirrorEntry } from '../../src/runner/node/mirror-changes.ts';
import { WorkspaceMirror } from '../../src/runner/node/workspace-mirror.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mirror-'));
  dirs.push(dir);
  return dir;
}

/** A manifest and the blob server behind it, counting fetches. */
function source(files: Record<string, string>) {
  const blobs = new Map<string, Uint8Array>();
  const entries: MirrorEntry[] = [];
  const dirsSeen = new Set<string>();
  let version = 1;
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i += 1) {
      const dir = parts.slice(0, i).join('/');
      if (!dirsSeen.has(dir)) entries.push({ path: dir, type: 'dir', blob: null, target: null, version });
      dirsSeen.add(dir);
    }
    const bytes = new TextEncoder().encode(content);
    const hash = sha256(bytes);
    blobs.set(hash, bytes);
    entries.push({ path, type: 'file', blob: hash, target: null, version: (version += 1) });
  }
  const fetched: string[] = [];
  const fetchBlob = async (hash: string) => {
    fetched.push(hash);
    return blobs.get(hash)!;
  };
  return { entries, fetchBlob, fetched };
}

/**
 * Every behaviour holds whether files are created on the event loop or by the runner's writer
 * threads (which the runner uses): the threads must refuse, replace and stamp exactly alike.
 */
let writers: FileWriters | undefined;
function newMirror(root: string, blobs: BlobFiles): WorkspaceMirror {
  return new WorkspaceMirror(root, blobs, writers);
}

describe.each([
  ['on the event loop', false],
  ['by writer threads', true],
])('files created %s', (_mode, threaded) => {
  beforeAll(() => {
    writers = threaded ? new FileWriters() : undefined;
  });
  afterAll(async () => {
    await writers?.close();
    writers = undefined;
  });

  describe('materialise', () => {
    it('writes files, directories and safe symlinks, fetching each blob once across mirrors', async () => {
      const cache = new BlobFiles(tempDir());
      const { entries, fetchBlob, fetched } = source({ 'a.txt': 'same', 'src/b.txt': 'same', 'src/c.txt': 'other' });
      entries.push({ path: 'link', type: 'symlink', blob: null, target: '/src/c.txt', version: 9 });
      entries.push({ path: 'src/up', type: 'symlink', blob: null, target: '..', version: 9 });
      entries.push({ path: 'out', type: 'symlink', blob: null, target: '../etc', version: 9 });
      const first = newMirror(tempDir(), cache);
      await first.materialise(entries, fetchBlob);
      expect(readFileSync(join(first.root, 'src/b.txt'), 'utf8')).toBe('same');
      expect(readlinkSync(join(first.root, 'link'))).toBe('src/c.txt');
      expect(readFileSync(join(first.root, 'link'), 'utf8')).toBe('other');
      expect(readlinkSync(join(first.root, 'src/up'))).toBe('..');
      expect(existsSync(join(first.root, 'out')) || lstatExists(join(first.root, 'out'))).toBe(false);
      const second = newMirror(tempDir(), cache);
      await second.materialise(entries, fetchBlob);
      expect(fetched.sort()).toEqual(
        [sha256(new TextEncoder().encode('other')), sha256(new TextEncoder().encode('same'))].sort(),
      );
    });

    it('refuses a non-canonical path or a bad blob id before writing anything', async () => {
      for (const bad of ['../escape', 'a//b', '/abs', 'a/./b']) {
        const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
        const { entries, fetchBlob } = source({ 'ok.txt': 'x' });
        entries.push({ path: bad, type: 'file', blob: entries[0]!.blob, target: null, version: 1 });
        await expect(mirror.materialise(entries, fetchBlob)).rejects.toThrow();
        expect(existsSync(mirror.root) ? readdirSync(mirror.root) : []).toEqual([]);
      }
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      await expect(
        mirror.materialise(
          [{ path: 'f', type: 'file', blob: '../../etc/passwd', target: null, version: 1 }],
          async () => new Uint8Array(),
        ),
      ).rejects.toThrow(/blob/);
    });

    it('refuses a blob whose bytes do not match its id', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const { entries } = source({ 'f.txt': 'real' });
      await expect(mirror.materialise(entries, async () => new TextEncoder().encode('forged'))).rejects.toThrow(
        /refusing/,
      );
    });

    it('brings an existing copy up to date: changed files rewritten, removed entries deleted', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const before = source({ 'keep.txt': 'k', 'change.txt': 'old', 'gone/x.txt': 'x' });
      await mirror.materialise(before.entries, before.fetchBlob);
      const after = source({ 'keep.txt': 'k', 'change.txt': 'new' });
      await mirror.materialise(after.entries, after.fetchBlob);
      expect(readFileSync(join(mirror.root, 'change.txt'), 'utf8')).toBe('new');
      expect(existsSync(join(mirror.root, 'gone'))).toBe(false);
      expect(readdirSync(mirror.root).sort()).toEqual(['change.txt', 'keep.txt']);
    });
  });

  function lstatExists(path: string): boolean {
    try {
      lstatSync(path);
      return true;
    } catch {
      return false;
    }
  }

  describe('scan', () => {
    it('reports what a command created, changed and deleted, with the versions it started from', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const { entries, fetchBlob } = source({
        'same.txt': 's',
        'edit.txt': 'before',
        'del.txt': 'd',
        'dir/inner.txt': 'i',
      });
      await mirror.materialise(entries, fetchBlob);
      const version = (path: string) => entries.find((entry) => entry.path === path)!.version;
      writeFileSync(join(mirror.root, 'edit.txt'), 'after');
      writeFileSync(join(mirror.root, 'new.txt'), 'fresh');
      unlinkSync(join(mirror.root, 'del.txt'));
      rmSync(join(mirror.root, 'dir'), { recursive: true });
      mkdirSync(join(mirror.root, 'empty'));
      symlinkSync('/etc', join(mirror.root, 'etc-link'));
      symlinkSync('/workspace/same.txt', join(mirror.root, 'inside-link'));
      symlinkSync('same.txt', join(mirror.root, 'relative-link'));
      const { changes, skipped } = await mirror.scan();
      const text = (content: Uint8Array) => new TextDecoder().decode(content);
      expect(
        changes.map((change) =>
          change.op === 'write'
            ? [change.op, change.path, text(change.content), change.baseVersion]
            : change.op === 'symlink'
              ? [change.op, change.path, change.target]
              : [change.op, change.path],
        ),
      ).toEqual([
        ['write', 'edit.txt', 'after', version('edit.txt')],
        ['mkdir', 'empty'],
        ['symlink', 'etc-link', '../etc'],
        ['symlink', 'inside-link', '/same.txt'],
        ['write', 'new.txt', 'fresh', null],
        ['symlink', 'relative-link', 'same.txt'],
        ['delete', 'dir/inner.txt'],
        ['delete', 'dir'],
        ['delete', 'del.txt'],
      ]);
      expect(skipped).toEqual([]);
    });

    it('reports nothing when nothing changed, even for a file rewritten with the same bytes', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const { entries, fetchBlob } = source({ 'a.txt': 'same bytes', 'b/c.txt': 'c' });
      await mirror.materialise(entries, fetchBlob);
      writeFileSync(join(mirror.root, 'a.txt'), 'same bytes');
      expect((await mirror.scan()).changes).toEqual([]);
    });

    it('never reports as deleted a link kept off the disk because it leaves the workspace', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const { entries, fetchBlob } = source({ 'a.txt': 'a' });
      await mirror.materialise(
        [...entries, { path: 'escape', type: 'symlink', blob: null, target: '../../outside', version: 9 }],
        fetchBlob,
      );
      expect(existsSync(join(mirror.root, 'escape'))).toBe(false);
      expect((await mirror.scan()).changes).toEqual([]);
      // A command that puts a file of its own there replaces the link, as any write would.
      writeFileSync(join(mirror.root, 'escape'), 'mine');
      const { changes } = await mirror.scan();
      expect(changes).toMatchObject([{ op: 'write', path: 'escape', baseVersion: 9 }]);
      expect(Buffer.from((changes[0] as { content: Uint8Array }).content).toString()).toBe('mine');
    });

    it('skips names a workspace cannot hold', async () => {
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      await mirror.materialise([], async () => new Uint8Array());
      writeFileSync(join(mirror.root, 'bad\\name'), 'x');
      writeFileSync(join(mirror.root, 'cafe\u0301'), 'x');
      const { changes, skipped } = await mirror.scan();
      expect(changes).toEqual([]);
      expect(skipped.map((entry) => entry.path).sort()).toEqual(['bad\\name', 'cafe\u0301']);
    });
  });

  describe('link targets', () => {
    it('map workspace-absolute targets to relative links and refuse escaping ones', () => {
      expect(toDiskTarget('a/b/link', '/x/y')).toBe('../../x/y');
      expect(toDiskTarget('link', '/')).toBe('.');
      expect(toDiskTarget('a/link', '../x')).toBe('../x');
      expect(toDiskTarget('a/link', '../../x')).toBeUndefined();
      expect(toDiskTarget('link', '/../x')).toBeUndefined();
    });

    it('map absolute targets read from disk into the workspace, or out of it', () => {
      expect(fromDiskTarget('x', '/workspace/src', '/var/mirror')).toBe('/src');
      expect(fromDiskTarget('x', '/var/mirror/src', '/var/mirror')).toBe('/src');
      expect(fromDiskTarget('a/b/x', '/etc/passwd', '/var/mirror')).toBe('../../../etc/passwd');
      expect(fromDiskTarget('x', 'rel/path', '/var/mirror')).toBe('rel/path');
    });
  });

  describe('host safety', () => {
    it('never writes through a link that a command put where the manifest has a directory', async () => {
      const outside = tempDir();
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const first = source({ 'src/a.txt': 'a' });
      await mirror.materialise(first.entries, first.fetchBlob);
      rmSync(join(mirror.root, 'src'), { recursive: true });
      symlinkSync(outside, join(mirror.root, 'src'));
      const second = source({ 'src/a.txt': 'a', 'src/b.txt': 'b' });
      await mirror.materialise(second.entries, second.fetchBlob);
      expect(readdirSync(outside)).toEqual([]);
      expect(lstatSync(join(mirror.root, 'src')).isDirectory()).toBe(true);
      expect(readFileSync(join(mirror.root, 'src/b.txt'), 'utf8')).toBe('b');
    });
  });

  describe('batched blob fetches', () => {
    it('fetches a cold copy in a few batch requests and still checks every blob', async () => {
      const files = Object.fromEntries(
        Array.from({ length: 1200 }, (_, i) => [`d${i % 10}/f${i}.txt`, `content ${i}\n`]),
      );
      const { entries, fetchBlob, fetched } = source(files);
      const sized = entries.map((entry) => (entry.type === 'file' ? { ...entry, size: 20 } : entry));
      const batches: number[] = [];
      const fetchBlobs = async (hashes: string[]) => {
        batches.push(hashes.length);
        return new Map(await Promise.all(hashes.map(async (hash) => [hash, await fetchBlob(hash)] as const)));
      };
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      await mirror.materialise(
        sized,
        async () => {
          throw new Error('no single fetch expected');
        },
        fetchBlobs,
      );
      // Two small batches first, so the writing starts soon, then 500 a request.
      expect(batches).toEqual([100, 250, 500, 350]);
      expect(fetched).toHaveLength(1200);
      expect(readFileSync(join(mirror.root, 'd3/f1193.txt'), 'utf8')).toBe('content 1193\n');
      const forged = newMirror(tempDir(), new BlobFiles(tempDir()));
      await expect(
        forged.materialise(
          sized,
          fetchBlob,
          async (hashes) => new Map(hashes.map((hash) => [hash, new TextEncoder().encode('forged')])),
        ),
      ).rejects.toThrow(/refusing/);
    });
  });

  /** A source whose blobs are also served in batches, as the runner fetches a cold copy; `forge` serves other bytes for some blobs. */
  function batched(files: Record<string, string>, forge = new Set<string>()) {
    const plain = source(files);
    const entries = plain.entries.map((entry) =>
      entry.type === 'file' ? { ...entry, size: files[entry.path]!.length } : entry,
    );
    const requested: string[] = [];
    const fetchBlobs = async (hashes: string[]) => {
      requested.push(...hashes);
      const answer = new Map<string, Uint8Array>();
      for (const hash of hashes)
        answer.set(hash, forge.has(hash) ? new TextEncoder().encode('forged') : await plain.fetchBlob(hash));
      return answer;
    };
    return { ...plain, entries, fetchBlobs, requested };
  }

  const blobOf = (content: string) => sha256(new TextEncoder().encode(content));

  describe('materialise from batches', () => {
    it('writes each file as a copy of its own: an edit in place changes neither the cache nor another copy', async () => {
      const cacheDir = tempDir();
      const files = Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`d${i % 7}/sub${i % 3}/f${i}.txt`, `content ${i % 150}\n`]),
      );
      const first = batched(files);
      const blobs = new BlobFiles(cacheDir);
      const mirror = newMirror(tempDir(), blobs);
      await mirror.materialise(
        first.entries,
        async () => {
          throw new Error('no single fetch expected');
        },
        first.fetchBlobs,
      );
      // The runner writes the cache copies once the job has answered.
      await blobs.storeDeferred();
      for (const [path, content] of Object.entries(files)) {
        expect(readFileSync(join(mirror.root, path), 'utf8')).toBe(content);
        expect(lstatSync(join(mirror.root, path)).nlink).toBe(1);
      }
      expect((await mirror.scan()).changes).toEqual([]);
      // Both files holding `content 0` are edited in place, as a command may.
      writeFileSync(join(mirror.root, 'd0/sub0/f0.txt'), 'edited in place', { flag: 'r+' });
      writeFileSync(join(mirror.root, 'd3/sub0/f150.txt'), 'edited too', { flag: 'r+' });
      const second = newMirror(tempDir(), new BlobFiles(cacheDir));
      const again = batched(files);
      await second.materialise(
        again.entries,
        async () => {
          throw new Error('no single fetch expected');
        },
        again.fetchBlobs,
      );
      expect(again.requested).toEqual([]);
      for (const [path, content] of Object.entries(files))
        expect(readFileSync(join(second.root, path), 'utf8')).toBe(content);
    });

    it('writes cache copies of batch blobs only when asked (after the job), or at once when a blob is wanted from the cache', async () => {
      const cacheDir = tempDir();
      const files = { 'a.txt': 'alpha\n', 'b/b.txt': 'beta\n', 'c.txt': 'gamma\n' };
      const blobs = new BlobFiles(cacheDir);
      const source = batched(files);
      await newMirror(tempDir(), blobs).materialise(source.entries, source.fetchBlob, source.fetchBlobs);
      const cachedFiles = () =>
        readdirSync(cacheDir, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => entry.name)
          .sort();
      expect(cachedFiles()).toEqual([]);
      // Asked for from the cache, a deferred blob is written there at once, without a fetch.
      const alpha = source.entries.find((entry) => entry.path === 'a.txt')!.blob!;
      const path = await blobs.file(alpha, async () => {
        throw new Error('no fetch expected');
      });
      expect(readFileSync(path, 'utf8')).toBe('alpha\n');
      await blobs.storeDeferred();
      const hashes = source.entries
        .filter((entry) => entry.type === 'file')
        .map((entry) => entry.blob!)
        .sort();
      expect(cachedFiles()).toEqual(hashes);
      for (const hash of hashes)
        expect(
          createHash('sha256')
            .update(readFileSync(join(cacheDir, hash.slice(0, 2), hash)))
            .digest('hex'),
        ).toBe(hash);
      // A second copy from a fresh process's view of the same cache needs no request.
      const again = batched(files);
      await newMirror(tempDir(), new BlobFiles(cacheDir)).materialise(again.entries, again.fetchBlob, again.fetchBlobs);
      expect(again.requested).toEqual([]);
    });

    it('never writes or removes through links a command planted where the manifest has files and directories', async () => {
      const outside = tempDir();
      mkdirSync(join(outside, 'dir'));
      writeFileSync(join(outside, 'victim.txt'), 'victim');
      writeFileSync(join(outside, 'dir/old.txt'), 'keep me');
      writeFileSync(join(outside, 'dir/a.txt'), 'outside a');
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const before = batched({ 'top.txt': 'top', 'src/a.txt': 'a', 'src/old.txt': 'old' });
      await mirror.materialise(before.entries, before.fetchBlob, before.fetchBlobs);
      // What a command still running might do: swap a file and a directory for links, plant a link where a file is coming.
      unlinkSync(join(mirror.root, 'top.txt'));
      symlinkSync(join(outside, 'victim.txt'), join(mirror.root, 'top.txt'));
      rmSync(join(mirror.root, 'src'), { recursive: true });
      symlinkSync(join(outside, 'dir'), join(mirror.root, 'src'));
      symlinkSync(join(outside, 'planted.txt'), join(mirror.root, 'new.txt'));
      const after = batched({
        'top.txt': 'top changed',
        'new.txt': 'new',
        'src/a.txt': 'a',
        'src/b.txt': 'b',
        'src/deep/c.txt': 'c',
      });
      await mirror.materialise(after.entries, after.fetchBlob, after.fetchBlobs);
      expect(readdirSync(outside).sort()).toEqual(['dir', 'victim.txt']);
      expect(readdirSync(join(outside, 'dir')).sort()).toEqual(['a.txt', 'old.txt']);
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim');
      expect(readFileSync(join(outside, 'dir/old.txt'), 'utf8')).toBe('keep me');
      expect(readFileSync(join(outside, 'dir/a.txt'), 'utf8')).toBe('outside a');
      for (const [path, content] of [
        ['top.txt', 'top changed'],
        ['new.txt', 'new'],
        ['src/a.txt', 'a'],
        ['src/b.txt', 'b'],
        ['src/deep/c.txt', 'c'],
      ] as const) {
        expect(lstatSync(join(mirror.root, path)).isFile(), path).toBe(true);
        expect(readFileSync(join(mirror.root, path), 'utf8')).toBe(content);
      }
      expect(lstatSync(join(mirror.root, 'src')).isDirectory()).toBe(true);
      expect(readdirSync(join(mirror.root, 'src')).sort()).toEqual(['a.txt', 'b.txt', 'deep']);
    });

    it('replaces, never follows, a link planted while the copy is being written', async () => {
      for (const batch of [true, false]) {
        const outside = tempDir();
        writeFileSync(join(outside, 'victim.txt'), 'victim');
        const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
        const { entries, fetchBlob, fetchBlobs } = batched({ 'src/late.txt': 'late', 'src/dangling.txt': 'dangling' });
        // Planted after the directory was listed, before the files are written: as a command still running could.
        const plant = () => {
          if (existsSync(join(mirror.root, 'src')) && !lstatExists(join(mirror.root, 'src/late.txt'))) {
            symlinkSync(join(outside, 'victim.txt'), join(mirror.root, 'src/late.txt'));
            symlinkSync(join(outside, 'made.txt'), join(mirror.root, 'src/dangling.txt'));
          }
        };
        if (batch) {
          await mirror.materialise(entries, fetchBlob, async (hashes) => {
            plant();
            return fetchBlobs(hashes);
          });
        } else {
          await mirror.materialise(entries, async (hash) => {
            plant();
            return fetchBlob(hash);
          });
        }
        expect(readdirSync(outside), `batch ${batch}`).toEqual(['victim.txt']);
        expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim');
        expect(lstatSync(join(mirror.root, 'src/late.txt')).isFile()).toBe(true);
        expect(readFileSync(join(mirror.root, 'src/late.txt'), 'utf8')).toBe('late');
        expect(readFileSync(join(mirror.root, 'src/dangling.txt'), 'utf8')).toBe('dangling');
      }
    });

    it('does not remove through a link what the manifest dropped', async () => {
      const outside = tempDir();
      writeFileSync(join(outside, 'gone.txt'), 'not the workspace’s');
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      const before = batched({ 'src/gone.txt': 'gone', 'src/kept.txt': 'kept' });
      await mirror.materialise(before.entries, before.fetchBlob, before.fetchBlobs);
      rmSync(join(mirror.root, 'src'), { recursive: true });
      symlinkSync(outside, join(mirror.root, 'src'));
      const after = batched({ 'src/kept.txt': 'kept' });
      await mirror.materialise(after.entries, after.fetchBlob, after.fetchBlobs);
      expect(readFileSync(join(outside, 'gone.txt'), 'utf8')).toBe('not the workspace’s');
      expect(readdirSync(join(mirror.root, 'src'))).toEqual(['kept.txt']);
    });

    it('refuses a forged blob in a batch without writing it anywhere, and a later honest copy completes', async () => {
      const files = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`d${i % 4}/f${i}.txt`, `honest ${i}`]));
      const cacheDir = tempDir();
      const mirror = newMirror(tempDir(), new BlobFiles(cacheDir));
      const forged = batched(files, new Set([blobOf('honest 17')]));
      await expect(mirror.materialise(forged.entries, forged.fetchBlob, forged.fetchBlobs)).rejects.toThrow(/refusing/);
      const written = Object.keys(files).filter((path) => existsSync(join(mirror.root, path)));
      for (const path of written) expect(readFileSync(join(mirror.root, path), 'utf8')).toBe(files[path]);
      expect(existsSync(join(cacheDir, blobOf('honest 17').slice(0, 2), blobOf('honest 17')))).toBe(false);
      const honest = batched(files);
      await mirror.materialise(honest.entries, honest.fetchBlob, honest.fetchBlobs);
      for (const [path, content] of Object.entries(files))
        expect(readFileSync(join(mirror.root, path), 'utf8')).toBe(content);
      expect((await mirror.scan()).changes).toEqual([]);
    });

    it('fetches one by one what a batch answer lacks', async () => {
      const files = { 'a.txt': 'a', 'b.txt': 'b', 'c.txt': 'c' };
      const { entries, fetchBlob, fetched } = batched(files);
      const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
      await mirror.materialise(
        entries,
        fetchBlob,
        async (hashes) =>
          new Map(
            hashes
              .filter((hash) => hash !== blobOf('b'))
              .map((hash) => [
                hash,
                new TextEncoder().encode(Object.values(files).find((content) => blobOf(content) === hash)!),
              ]),
          ),
      );
      expect(fetched).toEqual([blobOf('b')]);
      expect(readFileSync(join(mirror.root, 'b.txt'), 'utf8')).toBe('b');
    });

    it('refuses a manifest with an entry below a file or a link, before writing anything', async () => {
      const { entries, fetchBlob, fetchBlobs } = batched({ 'f.txt': 'f', 'ok.txt': 'ok' });
      for (const [parent, type] of [
        ['f.txt', 'file'],
        ['link', 'symlink'],
      ] as const) {
        const mirror = newMirror(tempDir(), new BlobFiles(tempDir()));
        const bad: MirrorEntry[] = [
          ...entries,
          {
            path: `${parent}/x.txt`,
            type: 'file',
            blob: entries.find((entry) => entry.path === 'ok.txt')!.blob,
            target: null,
            version: 1,
            size: 2,
          },
        ];
        if (type === 'symlink') bad.push({ path: 'link', type: 'symlink', blob: null, target: '.', version: 1 });
        await expect(mirror.materialise(bad, fetchBlob, fetchBlobs)).rejects.toThrow(/below/);
        expect(existsSync(mirror.root) ? readdirSync(mirror.root) : []).toEqual([]);
      }
    });

    it('brings a copy up to date after a runner restart: files the disk already holds are replaced, the rest kept in place', async () => {
      const root = tempDir();
      const cacheDir = tempDir();
      const before = batched({ 'same.txt': 'same', 'change.txt': 'old', 'dir/x.txt': 'x' });
      const firstBlobs = new BlobFiles(cacheDir);
      await newMirror(root, firstBlobs).materialise(before.entries, before.fetchBlob, before.fetchBlobs);
      await firstBlobs.storeDeferred();
      writeFileSync(join(root, 'stray.txt'), 'left by a command');
      // A new mirror over the same directory knows nothing of it.
      const mirror = newMirror(root, new BlobFiles(cacheDir));
      const after = batched({ 'same.txt': 'same', 'change.txt': 'new', 'dir/x.txt': 'x', 'dir/y.txt': 'y' });
      await mirror.materialise(after.entries, after.fetchBlob, after.fetchBlobs);
      expect(after.requested).toEqual([blobOf('new'), blobOf('y')]);
      expect(readFileSync(join(root, 'change.txt'), 'utf8')).toBe('new');
      expect(readFileSync(join(root, 'dir/y.txt'), 'utf8')).toBe('y');
      expect((await mirror.scan()).changes.map((change) => [change.op, change.path])).toEqual([['write', 'stray.txt']]);
    });
  });
});

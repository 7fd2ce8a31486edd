// The runner-local workspace copy: materialise from a manifest, scan what a command changed.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobFiles } from '../../src/runner/node/blob-files.ts';
import { fromDiskTarget, sha256, toDiskTarget, WorkspaceMirror, type MirrorEntry } from '../../src/runner/node/workspace-mirror.ts';

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

describe('materialise', () => {
  it('writes files, directories and safe symlinks, fetching each blob once across mirrors', async () => {
    const cache = new BlobFiles(tempDir());
    const { entries, fetchBlob, fetched } = source({ 'a.txt': 'same', 'src/b.txt': 'same', 'src/c.txt': 'other' });
    entries.push({ path: 'link', type: 'symlink', blob: null, target: '/src/c.txt', version: 9 });
    entries.push({ path: 'src/up', type: 'symlink', blob: null, target: '..', version: 9 });
    entries.push({ path: 'out', type: 'symlink', blob: null, target: '../etc', version: 9 });
    const first = new WorkspaceMirror(tempDir(), cache);
    await first.materialise(entries, fetchBlob);
    expect(readFileSync(join(first.root, 'src/b.txt'), 'utf8')).toBe('same');
    expect(readlinkSync(join(first.root, 'link'))).toBe('src/c.txt');
    expect(readFileSync(join(first.root, 'link'), 'utf8')).toBe('other');
    expect(readlinkSync(join(first.root, 'src/up'))).toBe('..');
    expect(existsSync(join(first.root, 'out')) || lstatExists(join(first.root, 'out'))).toBe(false);
    const second = new WorkspaceMirror(tempDir(), cache);
    await second.materialise(entries, fetchBlob);
    expect(fetched.sort()).toEqual([sha256(new TextEncoder().encode('other')), sha256(new TextEncoder().encode('same'))].sort());
  });

  it('refuses a non-canonical path or a bad blob id before writing anything', async () => {
    for (const bad of ['../escape', 'a//b', '/abs', 'a/./b']) {
      const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
      const { entries, fetchBlob } = source({ 'ok.txt': 'x' });
      entries.push({ path: bad, type: 'file', blob: entries[0]!.blob, target: null, version: 1 });
      await expect(mirror.materialise(entries, fetchBlob)).rejects.toThrow();
      expect(existsSync(mirror.root) ? readdirSync(mirror.root) : []).toEqual([]);
    }
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    await expect(mirror.materialise([{ path: 'f', type: 'file', blob: '../../etc/passwd', target: null, version: 1 }], async () => new Uint8Array())).rejects.toThrow(/blob/);
  });

  it('refuses a blob whose bytes do not match its id', async () => {
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    const { entries } = source({ 'f.txt': 'real' });
    await expect(mirror.materialise(entries, async () => new TextEncoder().encode('forged'))).rejects.toThrow(/refusing/);
  });

  it('brings an existing copy up to date: changed files rewritten, removed entries deleted', async () => {
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
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
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    const { entries, fetchBlob } = source({ 'same.txt': 's', 'edit.txt': 'before', 'del.txt': 'd', 'dir/inner.txt': 'i' });
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
        change.op === 'write' ? [change.op, change.path, text(change.content), change.baseVersion] : change.op === 'symlink' ? [change.op, change.path, change.target] : [change.op, change.path],
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
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    const { entries, fetchBlob } = source({ 'a.txt': 'same bytes', 'b/c.txt': 'c' });
    await mirror.materialise(entries, fetchBlob);
    writeFileSync(join(mirror.root, 'a.txt'), 'same bytes');
    expect((await mirror.scan()).changes).toEqual([]);
  });

  it('skips names a workspace cannot hold', async () => {
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
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
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
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
    const files = Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`d${i % 10}/f${i}.txt`, `content ${i}\n`]));
    const { entries, fetchBlob, fetched } = source(files);
    const sized = entries.map((entry) => (entry.type === 'file' ? { ...entry, size: 20 } : entry));
    const batches: number[] = [];
    const fetchBlobs = async (hashes: string[]) => {
      batches.push(hashes.length);
      return new Map(await Promise.all(hashes.map(async (hash) => [hash, await fetchBlob(hash)] as const)));
    };
    const mirror = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    await mirror.materialise(sized, async () => {
      throw new Error('no single fetch expected');
    }, fetchBlobs);
    expect(batches.reduce((sum, count) => sum + count, 0)).toBe(1200);
    expect(batches.length).toBeLessThanOrEqual(3);
    expect(fetched).toHaveLength(1200);
    expect(readFileSync(join(mirror.root, 'd3/f1193.txt'), 'utf8')).toBe('content 1193\n');
    const forged = new WorkspaceMirror(tempDir(), new BlobFiles(tempDir()));
    await expect(
      forged.materialise(sized, fetchBlob, async (hashes) => new Map(hashes.map((hash) => [hash, new TextEncoder().encode('forged')]))),
    ).rejects.toThrow(/refusing/);
  });
});

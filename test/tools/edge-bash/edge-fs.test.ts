// The edge engine's own filesystem (edge-fs.ts): a tree of directories under just-bash's
// IFileSystem, acting as a POSIX disk where just-bash's InMemoryFs does not, and the interpreter
// running over it (a redirect or touch into a missing directory fails as bash fails).
import { Bash } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { EdgeFs, MissingDirectoryError } from '../../../src/tools/edge-bash/edge-fs.ts';
import type { ManifestEntry } from '../../../src/workspace/manifest-entry.ts';

const bytes = (value: string) => new TextEncoder().encode(value);

function entry(path: string, type: ManifestEntry['type'] = 'file', size = 0): ManifestEntry {
  return { path, type, blob: type === 'file' ? 'b' : null, target: null, size, version: 1 };
}

/** A filesystem holding `files` under /w, read through a counting reader, with the changed paths noted. */
function filesystem(files: Record<string, string>, options: { maxTotalBytes?: number } = {}) {
  const reads = { one: 0, many: 0 };
  const changed: string[] = [];
  const fs = new EdgeFs({
    ...options,
    onChange: (path) => changed.push(path),
    reader: {
      read: async (path) => {
        reads.one += 1;
        return bytes(files[path]!);
      },
      readMany: async (entries) => {
        reads.many += 1;
        return entries.map((each) => bytes(files[each.path]!));
      },
    },
  });
  fs.mkdirSync('/w');
  fs.addEntries(
    '/w',
    Object.entries(files).map(([path, content]) => entry(path, 'file', bytes(content).byteLength)),
  );
  // Making /w was a change; what a test does next is what it looks at.
  changed.length = 0;
  return { fs, reads, changed };
}

describe('EdgeFs', () => {
  it('lists a directory by its children only, sorted by name, with their types', async () => {
    const { fs, changed } = filesystem({ 'b.txt': 'b', 'a.txt': 'a', 'd/x.txt': 'x', 'd/e/y.txt': 'y' });
    expect(await fs.readdir('/w')).toEqual(['a.txt', 'b.txt', 'd']);
    expect(await fs.readdirWithFileTypes('/w/d')).toEqual([
      { name: 'e', isFile: false, isDirectory: true, isSymbolicLink: false },
      { name: 'x.txt', isFile: true, isDirectory: false, isSymbolicLink: false },
    ]);
    await expect(fs.readdir('/w/missing')).rejects.toThrow(/^ENOENT/);
    await expect(fs.readdir('/w/a.txt')).rejects.toThrow(/^ENOTDIR/);
    // Adding the entries changed nothing.
    expect(changed).toEqual([]);
  });

  it('reads a file on first use, knows its size before, and fetches the rest of a directory together', async () => {
    const files = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`d/f${i}.txt`, `file ${i}\n`]));
    const { fs, reads } = filesystem(files);
    expect((await fs.stat('/w/d/f0.txt')).size).toBe(7);
    expect(reads).toEqual({ one: 0, many: 0 });
    expect(await fs.readFile('/w/d/f0.txt')).toBe('file 0\n');
    expect(await fs.readFile('/w/d/f1.txt')).toBe('file 1\n');
    for (let i = 2; i < 10; i += 1) expect(await fs.readFile(`/w/d/f${i}.txt`)).toBe(`file ${i}\n`);
    // The first alone, then the other nine in one call.
    expect(reads).toEqual({ one: 1, many: 1 });
  });

  it('fails a write below a missing directory or a file, where InMemoryFs made the directory', async () => {
    const { fs, changed } = filesystem({ 'a.txt': 'a' });
    await expect(fs.writeFile('/w/new/dir/out.txt', 'x')).rejects.toBeInstanceOf(MissingDirectoryError);
    await expect(fs.appendFile('/w/new/out.txt', 'x')).rejects.toThrow('No such file or directory');
    await expect(fs.writeFile('/w/a.txt/out.txt', 'x')).rejects.toThrow(/^ENOTDIR/);
    await expect(fs.mkdir('/w/x/y')).rejects.toThrow(/^ENOENT/);
    await expect(fs.symlink('a.txt', '/w/x/link')).rejects.toThrow(/^ENOENT/);
    expect(await fs.exists('/w/new')).toBe(false);
    expect(changed).toEqual([]);
    await fs.mkdir('/w/x/y', { recursive: true });
    expect(changed).toEqual(['/w/x', '/w/x/y']);
  });

  it('follows links in every name of a path, writes through a link to its target, and stops at a loop', async () => {
    const { fs, changed } = filesystem({ 'd/a.txt': 'a\n' });
    await fs.symlink('d', '/w/dl');
    await fs.symlink('dl/a.txt', '/w/al');
    await fs.symlink('loop2', '/w/loop1');
    await fs.symlink('loop1', '/w/loop2');
    changed.length = 0;
    expect(await fs.readFile('/w/al')).toBe('a\n');
    expect(await fs.realpath('/w/al')).toBe('/w/d/a.txt');
    await fs.appendFile('/w/al', 'more\n');
    expect(changed).toEqual(['/w/d/a.txt']);
    expect(await fs.readFile('/w/d/a.txt')).toBe('a\nmore\n');
    expect((await fs.lstat('/w/al')).isSymbolicLink).toBe(true);
    expect((await fs.lstat('/w/dl/a.txt')).isFile).toBe(true);
    await expect(fs.readFile('/w/loop1')).rejects.toThrow(/^ELOOP/);
    // rm of a link removes the link, not what it points to.
    await fs.rm('/w/dl');
    expect(await fs.readdir('/w')).toEqual(['al', 'd', 'loop1', 'loop2']);
  });

  it('copies the file a link points to without -r, the link itself with -r; a hard link shares its file', async () => {
    const { fs } = filesystem({ 'a.txt': 'a\n' });
    await fs.symlink('a.txt', '/w/l');
    await fs.cp('/w/l', '/w/copy.txt');
    expect((await fs.lstat('/w/copy.txt')).isFile).toBe(true);
    await fs.cp('/w/l', '/w/copy-link', { recursive: true });
    expect(await fs.readlink('/w/copy-link')).toBe('a.txt');
    await fs.link('/w/a.txt', '/w/hard.txt');
    await fs.writeFile('/w/hard.txt', 'changed\n');
    expect(await fs.readFile('/w/a.txt')).toBe('changed\n');
    expect((await fs.stat('/w/a.txt')).identity).toBe((await fs.stat('/w/hard.txt')).identity);
    await expect(fs.cp('/w', '/w/inside', { recursive: true })).rejects.toThrow(/^EINVAL/);
  });

  it('moves entries as rename does, and refuses a directory into itself or onto a non-empty one', async () => {
    const { fs, changed } = filesystem({ 'd/x.txt': 'x', 'e/y.txt': 'y', 'f.txt': 'f' });
    await expect(fs.mv('/w/d', '/w/d/sub')).rejects.toThrow(/^EINVAL/);
    await expect(fs.mv('/w/d', '/w/e')).rejects.toThrow(/^ENOTEMPTY/);
    await expect(fs.mv('/w/f.txt', '/w/e')).rejects.toThrow(/^EISDIR/);
    await expect(fs.mv('/w/f.txt', '/w/missing/f.txt')).rejects.toThrow(/^ENOENT/);
    await fs.mv('/w/d', '/w/moved');
    expect(changed).toEqual(['/w/d', '/w/moved']);
    expect(await fs.readFile('/w/moved/x.txt')).toBe('x');
    expect(await fs.exists('/w/d')).toBe(false);
  });

  it('holds no more file bytes than its bound, counting what it reads and what it writes', async () => {
    const { fs } = filesystem({ 'a.txt': 'a'.repeat(60) }, { maxTotalBytes: 100 });
    expect((await fs.readFile('/w/a.txt')).length).toBe(60);
    await expect(fs.writeFile('/w/b.txt', 'b'.repeat(50))).rejects.toThrow(/^ENOSPC/);
    await fs.rm('/w/a.txt');
    await fs.writeFile('/w/b.txt', 'b'.repeat(50));
    expect(await fs.exists('/w/b.txt')).toBe(true);
  });

  it('refuses a path with a NUL byte, and resolves paths by their names as just-bash does', async () => {
    const { fs } = filesystem({ 'a.txt': 'a' });
    await expect(fs.readFile('/w/a.txt\0x')).rejects.toThrow(/null byte/);
    expect(await fs.exists('/w/a.txt\0')).toBe(false);
    expect(fs.resolvePath('/w/d', '../a.txt')).toBe('/w/a.txt');
    expect(fs.resolvePath('/w', '/x//y/./z/..')).toBe('/x/y');
    expect(fs.resolvePath('/', '../..')).toBe('/');
  });
});

describe('the interpreter over EdgeFs', () => {
  async function shell(files: Record<string, string>) {
    const { fs } = filesystem(files);
    return { fs, bash: new Bash({ fs, cwd: '/w' }) };
  }

  it('runs a script with pipes, globs, redirects and here-docs', async () => {
    const { bash, fs } = await shell({ 'src/a.ts': 'TODO one\n', 'src/b.ts': 'x\nTODO two\n' });
    const result = await bash.exec('grep -rn TODO src | wc -l; cat src/*.ts > all.txt; cat <<EOF >> all.txt\nend\nEOF');
    expect(result).toMatchObject({ stdout: '2\n', stderr: '', exitCode: 0 });
    expect(await fs.readFile('/w/all.txt')).toBe('TODO one\nx\nTODO two\nend\n');
  });

  it('fails touch and tee below a missing directory as GNU does, creating nothing', async () => {
    const { bash, fs } = await shell({ 'a.txt': 'a' });
    expect(await bash.exec('touch missing-dir/x.txt')).toMatchObject({
      stderr: "touch: cannot touch 'missing-dir/x.txt': No such file or directory\n",
      exitCode: 1,
    });
    expect(await bash.exec('echo x | tee missing-dir/x.txt')).toMatchObject({
      stdout: 'x\n',
      stderr: 'tee: missing-dir/x.txt: No such file or directory\n',
      exitCode: 1,
    });
    expect(await fs.readdir('/w')).toEqual(['a.txt']);
  });

  it('ends the run with MissingDirectoryError at a redirect into a missing directory (the engine answers for it)', async () => {
    const { bash, fs } = await shell({ 'a.txt': 'a' });
    await expect(bash.exec('echo x > new/dir/out.txt; echo after')).rejects.toBeInstanceOf(MissingDirectoryError);
    expect(await fs.readdir('/w')).toEqual(['a.txt']);
  });
});

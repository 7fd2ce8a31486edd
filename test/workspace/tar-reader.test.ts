// The archive reader of uploads against modern-tar's strict decoder (which it replaced) on archives
// GNU tar writes in each of its formats and on the hand-made ones no tool writes, and its refusals:
// checksums, archives cut short, bytes after the end, an archive without its end.
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpackTar } from 'modern-tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTar, TarFormatError, type TarEntry } from '../../src/workspace/tar-reader.ts';
import { tarBytes } from '../support/tar-bytes.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-tar-reader-'));
  const tree = join(dir, 'tree');
  const long = `${'directory-of-forty-characters-each-xxxxx/'.repeat(4)}a-file-past-one-hundred-bytes.txt`;
  for (const sub of ['src/deep', 'empty', long.slice(0, long.lastIndexOf('/'))])
    mkdirSync(join(tree, sub), { recursive: true });
  writeFileSync(join(tree, 'src/a.txt'), 'hello\n');
  writeFileSync(join(tree, 'src/zero'), '');
  writeFileSync(join(tree, 'src/deep/ünï cödé 日本.txt'), 'unicode\n');
  writeFileSync(join(tree, 'src/block'), 'x'.repeat(1024));
  writeFileSync(join(tree, long), 'long\n');
  symlinkSync('a.txt', join(tree, 'src/link'));
  symlinkSync(long, join(tree, 'long-link'));
  linkSync(join(tree, 'src/a.txt'), join(tree, 'src/hard'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What both readers agree an entry is. */
const summary = (entry: { name: string; type: string; size: number; linkname: string; data: Uint8Array }) => ({
  name: entry.name,
  type: entry.type,
  size: entry.size,
  linkname: entry.linkname,
  data: Buffer.from(entry.data).toString('hex'),
});

async function modernTar(bytes: Uint8Array) {
  const entries = await unpackTar(bytes, { strict: true });
  return entries.map(({ header, data }) =>
    summary({
      name: header.name,
      type: header.type ?? 'file',
      size: header.size,
      linkname: header.linkname ?? '',
      data: data ?? new Uint8Array(0),
    }),
  );
}

const ours = (bytes: Uint8Array) => [...readTar(bytes)].map(summary);

describe('readTar', () => {
  it.each(['gnu', 'oldgnu', 'pax', 'ustar', 'posix'])(
    'reads what GNU tar writes as --format=%s as modern-tar does',
    async (format) => {
      // ustar has no long names: its archive leaves out the long file and link.
      const exclude = format === 'ustar' ? ['--exclude=directory-of-*', '--exclude=long-link'] : [];
      const bytes = new Uint8Array(
        execFileSync('tar', ['-c', `--format=${format}`, ...exclude, '-f', '-', '-C', join(dir, 'tree'), '.']),
      );
      const entries = ours(bytes);
      expect(entries).toEqual(await modernTar(bytes));
      expect(entries.map((entry) => entry.name)).toContain('./src/deep/ünï cödé 日本.txt');
      // One of the two names of the hard-linked file is a link to the other.
      expect(entries.filter((entry) => entry.type === 'link')).toMatchObject([{ size: 0, data: '' }]);
    },
  );

  it('reads a ustar prefix field, pax records and a name that is not UTF-8 as modern-tar does', async () => {
    const bytes = tarBytes([
      { name: 'plain.txt', content: 'plain' },
      { name: 'x', pax: { path: 'a\u0000b.txt' }, content: 'nul' },
      { name: 'y', pax: { path: `${'d/'.repeat(100)}f`, size: '3' }, content: 'abc' },
      { name: new Uint8Array([0x63, 0x61, 0x66, 0xe9]), content: 'latin-1' },
      { name: 'dir/', type: '0' },
      { name: 'fifo', type: '6' },
    ]);
    expect(ours(bytes)).toEqual(await modernTar(bytes));
    // The content is a view of the archive, not a copy.
    const first = readTar(bytes).next().value as TarEntry;
    expect(first.data.buffer).toBe(bytes.buffer);
  });

  it('refuses a bad checksum, an archive cut short, bytes after its end and one without its end', () => {
    const valid = tarBytes([{ name: 'a.txt', content: 'a' }]);
    const broken = valid.slice();
    broken[0] = 0x7f;
    const trailing = new Uint8Array(valid.byteLength + 512);
    trailing.set(valid);
    trailing[valid.byteLength + 10] = 1;
    for (const bytes of [
      new Uint8Array(0),
      broken,
      valid.subarray(0, 700),
      valid.subarray(0, 1024),
      valid.subarray(0, valid.byteLength - 512),
      trailing,
      new Uint8Array(4096).fill(0x41),
    ])
      expect(() => [...readTar(bytes)]).toThrow(TarFormatError);
  });

  it('shows each header before its content is checked whole', () => {
    const claim = tarBytes([{ name: 'huge.bin', size: 1 << 30, content: 'only the start' }]);
    const seen: number[] = [];
    expect(() => [...readTar(claim.subarray(0, 1024), (entry) => seen.push(entry.size))]).toThrow(TarFormatError);
    expect(seen).toEqual([1 << 30]);
  });
});

// Workspace archives (GET and PUT /v1/workspaces/{ws}/archive): a tree GNU tar made comes back
// byte-identical, hostile archives are refused whole with nothing changed, a gzip bomb stops at the
// limit, merge and replace, prefixes, and who may call.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request } from 'node:http';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { makeDataDir, removeDir, testHome, useServer } from '../support/server-process.ts';
import { tarBytes, tgzBytes, type RawEntry } from '../support/tar-bytes.ts';

const MiB = 1024 * 1024;
const BODY_LIMIT = 64 * MiB;
const server = useServer({ env: { TOOLGATE_RUNNER: 'off', TOOLGATE_MAX_BODY_BYTES: String(BODY_LIMIT) } });
const scratch = makeDataDir();
afterAll(() => removeDir(scratch));

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  bytes: Uint8Array;
}

async function send(method: string, path: string, body?: Uint8Array, key = server.key): Promise<Answer> {
  const init = { method, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { body }) };
  // A kept-alive connection left idle past the server's keep-alive time (tar -c of 20 MB under
  // load) may be closed by the server just as the next request goes out on it, before this
  // process has heard of the close: write EPIPE, or "other side closed". Every call here is a GET
  // or an idempotent PUT, so it goes again once, as the typed client's do.
  const response = await fetch(`${server.url}${path}`, init).catch((error: unknown) => {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code !== 'EPIPE' && code !== 'ECONNRESET' && code !== 'UND_ERR_SOCKET') throw error;
    return fetch(`${server.url}${path}`, init);
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, bytes };
}

const upload = (ws: string, body: Uint8Array, query = '', key?: string) =>
  send('PUT', `/v1/workspaces/${ws}/archive${query}`, body, key);
const download = (ws: string, query = '', key?: string) =>
  send('GET', `/v1/workspaces/${ws}/archive${query}`, undefined, key);
const info = async (ws: string) => (await server.call('GET', `/v1/workspaces/${ws}`)).body;
const listing = async (ws: string) =>
  (await server.call('GET', `/v1/workspaces/${ws}/files?recursive=true`)).body.entries as {
    path: string;
    type: string;
    version: string;
  }[];

const paths = async (ws: string) => (await listing(ws)).map((entry) => entry.path);
/** A refusal's status, code and the entry it names. */
const refusal = (answer: Answer) => [answer.status, answer.body.error?.code, answer.body.error?.details?.entry];

/** Every entry below `dir` by its path: a directory, a link's target, or a file's SHA-256. */
function treeOf(dir: string, base = ''): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const name of readdirSync(join(dir, base)).sort()) {
    const path = base === '' ? name : `${base}/${name}`;
    const stat = lstatSync(join(dir, path));
    if (stat.isSymbolicLink()) tree[path] = `link -> ${readlinkSync(join(dir, path))}`;
    else if (stat.isDirectory()) Object.assign(tree, { [path]: 'dir' }, treeOf(dir, path));
    else
      tree[path] = `file ${createHash('sha256')
        .update(readFileSync(join(dir, path)))
        .digest('hex')}`;
  }
  return tree;
}

/**
 * GNU tar, its output. Run without blocking the event loop: a test that blocked it for seconds
 * (tar -cz of 20 MB under load) sent its next request on a kept-alive connection the server had
 * closed meanwhile, unheard of, and failed with "other side closed" or EPIPE.
 */
async function tar(args: string[], input?: Uint8Array): Promise<Buffer> {
  const child = spawn('tar', args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stdin.end(input);
  const [code] = (await once(child, 'close')) as [number];
  if (code !== 0) throw new Error(`tar ${args.join(' ')} exited with ${code}`);
  return Buffer.concat(chunks);
}

/** GNU tar reading an archive from stdin (which it does not sniff for gzip): its output. */
async function gnuTar(args: string[], archive: Uint8Array): Promise<string> {
  const gzip = archive[0] === 0x1f && archive[1] === 0x8b ? ['-z'] : [];
  return (await tar([...args, ...gzip, '-f', '-'], archive)).toString();
}

/** Unpacks an archive with GNU tar into a new directory. */
async function gnuExtract(archive: Uint8Array, name: string): Promise<string> {
  const dir = join(scratch, name);
  mkdirSync(dir);
  await gnuTar(['-x', '-C', dir], archive);
  return dir;
}

/** The files of the tree the round trip carries. */
const treeFiles: Record<string, string | Uint8Array> = {
  'src/a.txt': 'hello\n',
  'src/zero': '',
  'src/deep/er/ünï cödé 日本.txt': 'unicode\n',
  'docs/😀.md': '# emoji\n',
  'docs/\u00e9t\u00e9.md': 'nfc\n',
  'big.bin': randomBytes(20 * 1000 * 1000),
  // Past ustar's 100-byte name field: GNU tar writes a long-name entry, the download a pax header.
  [`long/${'directory-name-of-forty-characters-each/'.repeat(4)}file-past-the-ustar-name-field.txt`]: 'long\n',
};

/** The tree the round trip carries: unicode names, empty directories and files, links inside it, a 20 MB file. */
function makeTree(): string {
  const root = join(scratch, 'tree');
  for (const dir of [
    'src/deep/er',
    'empty/nested-empty',
    'docs',
    `long/${'directory-name-of-forty-characters-each/'.repeat(4)}`,
  ])
    mkdirSync(join(root, dir), { recursive: true });
  for (const [path, content] of Object.entries(treeFiles)) writeFileSync(join(root, path), content);
  symlinkSync('a.txt', join(root, 'src/link'));
  symlinkSync('../../src', join(root, 'src/deep/up'));
  symlinkSync('src/deep', join(root, 'dirlink'));
  symlinkSync('not/there/yet', join(root, 'dangling'));
  symlinkSync(
    `${'directory-name-of-forty-characters-each/'.repeat(4)}file-past-the-ustar-name-field.txt`,
    join(root, 'long/link'),
  );
  return root;
}

describe('a tree made with GNU tar', () => {
  let tree: string;
  beforeAll(() => {
    tree = makeTree();
  });

  it.each(['tar', 'tgz'] as const)(
    'uploads as a %s and downloads again byte-identical: files, unicode names, empty dirs, links',
    async (format) => {
      const ws = `tree-${format}`;
      expect((await send('PUT', `/v1/workspaces/${ws}`)).status).toBe(201);
      const gzip = format === 'tgz' ? ['-z'] : [];
      const archive = await tar(['-c', ...gzip, '-f', '-', '-C', tree, '.']);
      // One through the typed client, one as a plain request.
      const applied =
        format === 'tgz'
          ? await server.client.upload(ws, new Uint8Array(archive))
          : (await upload(ws, new Uint8Array(archive))).body;
      const bytes = Object.values(treeFiles).reduce((total, content) => total + Buffer.byteLength(content), 0);
      expect(applied).toMatchObject({ files: 7, symlinks: 5, directories: 11, bytes, deleted: 0 });
      expect(applied.version).toBe((await info(ws)).version);

      const answer = await download(ws, `?format=${format}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe(format === 'tgz' ? 'application/gzip' : 'application/x-tar');
      // The Node home tells a tar's length ahead (pax headers of the long names counted); a gzip'd
      // one's is not known before it is made, nor any on the Worker home, which streams it.
      expect(answer.headers.get('content-length')).toBe(
        format === 'tar' && testHome === 'node' ? String(answer.bytes.byteLength) : null,
      );
      expect(answer.headers.get('content-disposition')).toBe(
        `attachment; filename="${ws}${format === 'tgz' ? '.tar.gz' : '.tar'}"`,
      );
      const sent = treeOf(await gnuExtract(archive, `${ws}-sent`));
      expect(Object.keys(sent)).toHaveLength(23);
      expect(treeOf(await gnuExtract(answer.bytes, `${ws}-back`))).toEqual(sent);
      // GNU tar finds nothing in the download that differs from the tree but times and modes.
      const listed = await gnuTar(['-t', '-v'], answer.bytes);
      expect(listed).toContain('src/link -> a.txt');
      expect(listed).toMatch(/^drwxr-xr-x .* empty\/nested-empty\/$/m);
    },
    120_000,
  );

  it('downloads through the client as a stream, a directory at a time with prefix', async () => {
    const body = await server.client.download('tree-tar', { prefix: 'src/deep', format: 'tar' });
    const bytes = new Uint8Array(await new Response(body).arrayBuffer());
    expect(treeOf(await gnuExtract(bytes, 'prefix-back'))).toEqual({
      er: 'dir',
      'er/ünï cödé 日本.txt': treeOf(tree)['src/deep/er/ünï cödé 日本.txt'],
      up: 'link -> ../../src',
    });
  });
});

describe('refused whole, naming the entry, with nothing changed', () => {
  const ws = 'guarded';
  beforeAll(async () => {
    await server.call('PUT', `/v1/workspaces/${ws}`, { excludedPaths: ['target'] });
    expect((await upload(ws, tarBytes([{ name: 'kept.txt', content: 'kept' }]))).status).toBe(200);
  });
  const fine: RawEntry = { name: 'fine.txt', content: 'a file that would be fine alone' };

  it.each<[string, RawEntry, string]>([
    ['a .. segment', { name: '../x', content: 'x' }, 'path_outside_workspace'],
    ['a .. deeper in', { name: 'a/../../x', content: 'x' }, 'path_outside_workspace'],
    ['an absolute name', { name: '/etc/x', content: 'x' }, 'path_outside_workspace'],
    ['.ssh/', { name: '.ssh/id_rsa', content: 'key' }, 'path_denied'],
    ['.SSH/ in any case, at depth', { name: 'home/.SSH/authorized_keys', content: 'key' }, 'path_denied'],
    ['a git hook', { name: 'repo/.git/hooks/pre-commit', content: '#!/bin/sh' }, 'path_denied'],
    ['an excluded path', { name: 'target/out.o', content: 'o' }, 'path_denied'],
    ['a symlink that climbs out', { name: 'out', type: '2', linkname: '../../etc' }, 'path_outside_workspace'],
    ['a symlink to a host path', { name: 'passwd', type: '2', linkname: '/etc/passwd' }, 'path_outside_workspace'],
    ['a NUL in the name (PAX path)', { name: 'nul', pax: { path: 'a\u0000b.txt' }, content: 'x' }, 'invalid_argument'],
    ['a control character', { name: 'bell\u0007.txt', content: 'x' }, 'invalid_argument'],
    [
      'a name over 4,096 bytes',
      { name: 'long', pax: { path: 'd/'.repeat(2100) + 'f' }, content: 'x' },
      'invalid_argument',
    ],
    ['a name that is not UTF-8', { name: new Uint8Array([0x63, 0x61, 0x66, 0xe9]), content: 'x' }, 'invalid_argument'],
    ['a hard link to nothing before it', { name: 'h', type: '1', linkname: 'later.txt' }, 'invalid_argument'],
  ])('%s', async (_, entry, code) => {
    const before = { info: await info(ws), files: await listing(ws) };
    // The entry comes after one that alone would be fine, and in a tgz too.
    for (const archive of [tarBytes([fine, entry]), tgzBytes([fine, entry])]) {
      const answer = await upload(ws, archive);
      expect([answer.status, answer.body.error?.code], JSON.stringify(answer.body)).toEqual([
        code === 'invalid_argument' ? 400 : 403,
        code,
      ]);
      // A name that is not UTF-8 is named with U+FFFD where its bad bytes were.
      const name = typeof entry.name === 'string' ? entry.name : new TextDecoder().decode(entry.name);
      expect(answer.body.error.details.entry).toBe(entry.pax?.path ?? name);
      expect(answer.body.error.message).toContain('refused whole');
    }
    expect({ info: await info(ws), files: await listing(ws) }).toEqual(before);
  });

  it('an entry below one the archive gives as a file or a link', async () => {
    for (const above of [
      { name: 'f', content: 'file' },
      { name: 'f', type: '2', linkname: 'kept.txt' },
    ]) {
      const answer = await upload(ws, tarBytes([above, { name: 'f/inner.txt', content: 'x' }]));
      expect(refusal(answer)).toEqual([400, 'invalid_argument', 'f/inner.txt']);
    }
    expect(await paths(ws)).toEqual(['kept.txt']);
  });

  it('a file over the file limit, as soon as its header says so', async () => {
    const claim = tarBytes([fine, { name: 'huge.bin', size: 200 * MiB, content: 'only the start' }]);
    const answer = await upload(ws, claim.subarray(0, claim.byteLength - 1024));
    expect(refusal(answer)).toEqual([413, 'payload_too_large', 'huge.bin']);
    expect(await paths(ws)).toEqual(['kept.txt']);
  });

  it('a body that is not a tar: 400 invalid_argument', async () => {
    const valid = tarBytes([fine]);
    const broken = valid.slice();
    broken[0] = 0x7f; // the checksum no longer adds up
    for (const body of [
      new TextEncoder().encode('{"path": "a.txt"}'),
      new Uint8Array(randomBytes(4096)),
      new Uint8Array(),
      valid.subarray(0, 700),
      broken,
      new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7]),
    ]) {
      const answer = await upload(ws, body);
      expect([answer.status, answer.body.error.code], JSON.stringify(answer.body)).toEqual([400, 'invalid_argument']);
    }
    expect(await paths(ws)).toEqual(['kept.txt']);
  });

  it('a gzip bomb (256 MiB of zeros, four times the limit) stops at the body limit with 413; the server answers on', async () => {
    const gzip = createGzip({ level: 9 });
    const chunks: Buffer[] = [];
    gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
    const zeros = Buffer.alloc(MiB);
    for (let written = 0; written < 256; written += 1) if (!gzip.write(zeros)) await once(gzip, 'drain');
    gzip.end();
    await once(gzip, 'end');
    const bomb = new Uint8Array(Buffer.concat(chunks));
    expect(bomb.byteLength).toBeLessThan(2 * MiB);
    const before = await info(ws);
    const answer = await upload(ws, bomb);
    expect([answer.status, answer.body.error.code, answer.body.error.details.limit]).toEqual([
      413,
      'payload_too_large',
      BODY_LIMIT,
    ]);
    expect(await info(ws)).toEqual(before);
    expect((await server.call('GET', '/healthz')).status).toBe(200);
    expect((await upload(ws, tarBytes([fine]))).status).toBe(200);
  }, 60_000);
});

/**
 * An upload sent in two parts over one request of a declared length: `head`, then, once
 * `between` has run, `rest`; the answer as `send` gives it. The server reads an archive as it
 * arrives, so it has acted on the head's entries before the rest is sent (or will, at the latest,
 * once it has come: what the test asserts holds either way).
 */
async function uploadInParts(
  ws: string,
  head: Uint8Array,
  rest: Uint8Array,
  between: () => Promise<void>,
): Promise<Answer> {
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const sent = request(
      `${server.url}/v1/workspaces/${ws}/archive`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${server.key}`, 'content-length': head.byteLength + rest.byteLength },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: body }));
      },
    );
    sent.on('error', reject);
    sent.write(head, () => void between().then(() => sent.end(rest), reject));
  });
  return { status, headers: new Headers(), body: JSON.parse(text), bytes: new TextEncoder().encode(text) };
}

describe('read as it arrives', () => {
  const ws = 'arriving';
  /** Most of a megabyte of other files, after the entries under test, so the body is still arriving when they are read. */
  const filler = Array.from({ length: 200 }, (_, index) => ({
    name: `filler/f${index}.bin`,
    content: new Uint8Array(randomBytes(4096)),
  }));
  beforeAll(async () => {
    await server.call('PUT', `/v1/workspaces/${ws}`, {});
    const answer = await upload(
      ws,
      tarBytes([
        { name: 'd/kept.txt', content: 'kept' },
        { name: 'other/own.txt', content: 'own' },
      ]),
    );
    expect(answer.status).toBe(200);
  });

  it('a hostile entry early in the body: refused whole once the rest has come, the client hears why, nothing changes', async () => {
    const before = { info: await info(ws), files: await listing(ws) };
    const archive = tarBytes([{ name: 'early.txt', content: 'e' }, { name: '../x', content: 'x' }, ...filler]);
    const answer = await uploadInParts(ws, archive.subarray(0, 4096), archive.subarray(4096), async () => {
      // Another call meanwhile is answered: the upload does not hold the workspace while it arrives.
      expect((await server.call('GET', `/v1/workspaces/${ws}/files`)).status).toBe(200);
    });
    expect(refusal(answer)).toEqual([403, 'path_outside_workspace', '../x']);
    expect({ info: await info(ws), files: await listing(ws) }).toEqual(before);
  });

  it('a directory swapped for a link while the body arrives: the archive makes it a directory again, nothing lands through the link', async () => {
    const archive = tarBytes([{ name: 'd/a.txt', content: 'through?' }, ...filler]);
    const answer = await uploadInParts(ws, archive.subarray(0, 2048), archive.subarray(2048), async () => {
      // d, which the archive's first entry lies in, becomes a link to other/ by another upload.
      const swap = await upload(ws, tarBytes([{ name: 'd', type: '2', linkname: 'other' }]));
      expect(swap.status).toBe(200);
      expect((await listing(ws)).find((entry) => entry.path === 'd')?.type).toBe('symlink');
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const after = await listing(ws);
    expect(after.find((entry) => entry.path === 'd')?.type).toBe('dir');
    expect(after.map((entry) => entry.path).filter((path) => path.startsWith('other/'))).toEqual(['other/own.txt']);
    const read = await server.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path: 'd/a.txt' });
    expect(read.body.result?.content).toContain('through?');
  });

  it('a body cut short mid-entry by the client closing: nothing changes, the server answers on', async () => {
    const before = { info: await info(ws), files: await listing(ws) };
    const archive = tarBytes([{ name: 'cut.txt', content: 'c' }, ...filler]);
    await new Promise<void>((resolve) => {
      const sent = request(`${server.url}/v1/workspaces/${ws}/archive`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${server.key}`, 'content-length': archive.byteLength },
      });
      sent.on('error', () => resolve());
      sent.on('close', () => resolve());
      sent.write(archive.subarray(0, 100_000), () => sent.destroy());
    });
    expect((await server.call('GET', '/healthz')).status).toBe(200);
    expect({ info: await info(ws), files: await listing(ws) }).toEqual(before);
  });
});

describe('one archive after another', () => {
  const files = (tag: string, count: number, size: number) =>
    Array.from({ length: count }, (_, index) => ({
      name: `d${index % 7}/${tag}-${index}.txt`,
      content: `${tag} ${index} `.padEnd(size, tag[0]),
    }));
  const larger = files('larger', 400, 3000);
  const smaller = files('smaller', 300, 700);
  /** The files' contents as `tar -x -O` prints them from a download: in path order. */
  const contents = (entries: { name: string; content: string }[]) =>
    [...entries]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((entry) => entry.content)
      .join('');

  it('each workspace keeps its own archive: a smaller one uploaded after a larger changes nothing of it', async () => {
    for (const [ws, entries] of [
      ['after-larger', larger],
      ['after-smaller', smaller],
    ] as const) {
      await server.call('PUT', `/v1/workspaces/${ws}`);
      const answer = await upload(ws, tarBytes(entries));
      expect([answer.status, answer.body.files]).toEqual([200, entries.length]);
    }
    for (const [ws, entries] of [
      ['after-larger', larger],
      ['after-smaller', smaller],
    ] as const) {
      const listed = await gnuTar(['-x', '-O'], (await download(ws)).bytes);
      expect(listed).toBe(contents(entries));
    }
  });

  it('a download left midway stops, and downloads side by side each get their own bytes', async () => {
    // Left after its first bytes: the server stops making it, and serves on.
    const left = request(`${server.url}/v1/workspaces/after-larger/archive`, {
      headers: { authorization: `Bearer ${server.key}` },
    });
    left.on('error', () => undefined);
    const [response] = (await once(left.end(), 'response')) as [import('node:http').IncomingMessage];
    expect(response.statusCode).toBe(200);
    await once(response, 'data');
    left.destroy();
    // Side by side (on the Node home each reuses chunks of its own as the socket sends them).
    const [first, second, third] = await Promise.all([
      download('after-larger'),
      download('after-smaller'),
      download('after-larger'),
    ]);
    expect(await gnuTar(['-x', '-O'], first.bytes)).toBe(contents(larger));
    expect(await gnuTar(['-x', '-O'], second.bytes)).toBe(contents(smaller));
    expect(await gnuTar(['-x', '-O'], third.bytes)).toBe(contents(larger));
    expect((await server.call('GET', '/healthz')).status).toBe(200);
  });
});

describe('modes and prefixes', () => {
  const ws = 'modes';
  const names = async (query: string) =>
    (await gnuTar(['-t'], (await download(ws, query)).bytes)).split('\n').filter(Boolean);
  const read = async (path: string) =>
    (await server.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path })).body.result?.content;

  it('merge writes over and keeps the rest; replace also deletes what the archive lacks under its prefix', async () => {
    await server.call('PUT', `/v1/workspaces/${ws}`);
    const first = await upload(
      ws,
      tarBytes([
        { name: 'keep.txt', content: 'k' },
        { name: 'src/a.txt', content: 'a1' },
        { name: 'src/old.txt', content: 'o' },
        { name: 'src/dir/x.txt', content: 'x' },
      ]),
    );
    expect(first.body).toMatchObject({ files: 4, directories: 0, deleted: 0 });
    const keep = (await listing(ws)).find((entry) => entry.path === 'keep.txt')!.version;

    const merged = await upload(
      ws,
      tarBytes([
        { name: 'a.txt', content: 'a2' },
        { name: 'new.txt', content: 'n' },
      ]),
      '?prefix=src',
    );
    expect(merged.body).toMatchObject({ files: 2, deleted: 0, version: first.body.version + 1 });
    expect(await names('')).toEqual([
      'keep.txt',
      'src/',
      'src/a.txt',
      'src/dir/',
      'src/dir/x.txt',
      'src/new.txt',
      'src/old.txt',
    ]);
    expect(await read('src/a.txt')).toBe('a2');

    // The same archive again changes nothing: no new version.
    const again = await upload(ws, tarBytes([{ name: 'a.txt', content: 'a2' }]), '?prefix=src');
    expect(again.body.version).toBe(merged.body.version);

    const replaced = await upload(
      ws,
      tarBytes([
        { name: 'a.txt', content: 'a3' },
        { name: 'dir/', type: '5' },
      ]),
      '?prefix=src&mode=replace',
    );
    expect(replaced.body).toMatchObject({ files: 1, directories: 1, deleted: 3 });
    expect(await names('')).toEqual(['keep.txt', 'src/', 'src/a.txt', 'src/dir/']);
    expect(await names('?prefix=src')).toEqual(['a.txt', 'dir/']);
    // Outside the prefix nothing moved, not even a version.
    expect((await listing(ws)).find((entry) => entry.path === 'keep.txt')!.version).toBe(keep);
  });

  it('an entry replaces one of another type, a directory with everything in it', async () => {
    await upload(ws, tarBytes([{ name: 'src/dir/inner.txt', content: 'i' }]));
    const answer = await upload(
      ws,
      tarBytes([
        { name: 'src/dir', content: 'now a file' },
        { name: 'keep.txt/x', content: 'y' },
      ]),
    );
    expect(answer.body).toMatchObject({ files: 2, deleted: 3 });
    expect(await read('src/dir')).toBe('now a file');
    expect(await read('keep.txt/x')).toBe('y');
  });

  it('a hard link becomes a copy; a fifo is skipped and listed', async () => {
    const answer = await upload(
      ws,
      tarBytes([
        { name: 'orig.txt', content: 'same' },
        { name: 'hard.txt', type: '1', linkname: 'orig.txt' },
        { name: 'pipe', type: '6' },
      ]),
      '?prefix=links',
    );
    expect(answer.body).toMatchObject({ files: 2, skipped: [{ entry: 'pipe' }] });
    expect(await read('links/hard.txt')).toBe('same');
    expect(await names('?prefix=links')).toEqual(['hard.txt', 'orig.txt']);
  });

  it('prefix is checked by the guard on both routes; options outside the contract are refused', async () => {
    const code = async (answer: Promise<Answer>) => {
      const { status, body } = await answer;
      return [status, body?.error?.code];
    };
    expect(await code(download(ws, '?prefix=missing'))).toEqual([404, 'not_found']);
    expect(await code(download(ws, '?prefix=keep.txt/x'))).toEqual([400, 'invalid_argument']);
    expect(await code(download(ws, '?prefix=../up'))).toEqual([403, 'path_outside_workspace']);
    expect(await code(upload(ws, tarBytes([]), '?prefix=.ssh'))).toEqual([403, 'path_denied']);
    expect(await code(upload(ws, tarBytes([]), '?prefix=src/dir'))).toEqual([400, 'invalid_argument']);
    expect(await code(download(ws, '?format=zip'))).toEqual([400, 'invalid_argument']);
    expect(await code(upload(ws, tarBytes([]), '?mode=overwrite'))).toEqual([400, 'invalid_argument']);
    expect(await code(download(ws, '?compress=1'))).toEqual([400, 'invalid_argument']);
  });
});

describe('who may', () => {
  it('a key outside the scope gets 404 on both routes; a key that may not write unasked may download only', async () => {
    const ws = 'tenant';
    await server.call('PUT', `/v1/workspaces/${ws}`);
    await upload(ws, tarBytes([{ name: 'secret.txt', content: 'tenant data' }]));
    const stranger = await createKey(server, { role: 'agent', workspaces: ['elsewhere'], approvalMode: 'auto' });
    for (const answer of [
      await download(ws, '', stranger.secret),
      await upload(ws, tarBytes([]), '', stranger.secret),
    ]) {
      expect([answer.status, answer.body.error.code]).toEqual([404, 'not_found']);
      expect(JSON.stringify(answer.body)).not.toContain('secret.txt');
    }
    const cautious = await createKey(server, { role: 'agent', workspaces: [ws], approvalMode: 'safe' });
    expect((await download(ws, '', cautious.secret)).status).toBe(200);
    const refused = await upload(ws, tarBytes([{ name: 'x.txt', content: 'x' }]), '', cautious.secret);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    const trusted = await createKey(server, { role: 'agent', workspaces: [ws], approvalMode: 'auto' });
    expect((await upload(ws, tarBytes([{ name: 'x.txt', content: 'x' }]), '', trusted.secret)).status).toBe(200);
  });
});

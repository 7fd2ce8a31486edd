// The edge engine's threads (edge-threads.ts) and what they keep of what they were sent: a
// workspace's listing is sent once for each state of it (its manifest stamp), a new state is sent
// again, and a thread that no longer holds one asks for it; its files' contents cross once; and a
// command the engine gives to a runner is decided before anything is listed.
import { afterAll, describe, expect, it } from 'vitest';
import { EdgeThreadPool } from '../../src/node/edge-threads.ts';
import { KeptListings, listingWeight } from '../../src/node/edge-thread-contents.ts';
import type { EdgeSource } from '../../src/tools/edge-bash/edge-copy.ts';
import type { ManifestEntry } from '../../src/workspace/manifest-entry.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A workspace state as the engine is given it, counting how often its listing and contents are taken. */
function state(files: Record<string, string>, listing: string, scope = 'store') {
  const taken = { listings: 0, files: 0 };
  const entries: ManifestEntry[] = Object.entries(files).map(([path, content]) => ({
    path,
    type: 'file',
    blob: `${path}:${content}`,
    target: null,
    size: bytes(content).byteLength,
    version: 1,
  }));
  const source: EdgeSource = {
    get entries() {
      taken.listings += 1;
      return entries;
    },
    read: async (path) => {
      taken.files += 1;
      return bytes(files[path]!);
    },
    readMany: async (many) => {
      taken.files += many.length;
      return many.map((entry) => bytes(files[entry.path]!));
    },
    scope,
    listing,
  };
  return { source, taken };
}

const run = (command: string) => ({ command, cwd: '', env: {}, timeoutMs: 10_000 });

describe('EdgeThreadPool', () => {
  const pool = new EdgeThreadPool({ size: 1 });
  afterAll(() => pool.close());

  it("sends a workspace state's listing and contents once, a new state's again", async () => {
    const first = state({ 'a.txt': 'one\n', 'b.txt': 'two\n' }, 'ws#1');
    expect((await pool.interpret(first.source, run('cat a.txt b.txt'))).stdout).toBe('one\ntwo\n');
    expect((await pool.interpret(first.source, run('cat a.txt b.txt; ls'))).stdout).toBe('one\ntwo\na.txt\nb.txt\n');
    expect(first.taken).toEqual({ listings: 1, files: 2 });

    // A commit: a new stamp, its listing sent; the unchanged file's content is still held.
    const second = state({ 'a.txt': 'one\n', 'c.txt': 'three\n' }, 'ws#2');
    expect((await pool.interpret(second.source, run('ls; cat a.txt c.txt'))).stdout).toBe('a.txt\nc.txt\none\nthree\n');
    expect(second.taken).toEqual({ listings: 1, files: 1 });
  });

  it('answers with the listing asked for when the thread no longer holds the one the pool thought it did', async () => {
    const kept = state({ 'k.txt': 'kept\n' }, 'ws-k#1');
    expect((await pool.interpret(kept.source, run('cat k.txt'))).stdout).toBe('kept\n');
    // The pool's record of what its thread holds, made to disagree with the thread.
    const { threads } = (pool as unknown as { pool: { threads: { kept: KeptListings<number> }[] } }).pool;
    const other = state({ 'z.txt': 'zed\n' }, 'ws-z#1');
    threads[0]!.kept.keep('ws-z#1', 1, 1);
    expect((await pool.interpret(other.source, run('ls; cat z.txt'))).stdout).toBe('z.txt\nzed\n');
    expect(other.taken.listings).toBe(1);
  });

  it('decides the engine before it lists: a command auto gives to a runner is never listed, one it runs is, once', async () => {
    const big = state({ 'x.txt': 'x\n' }, 'ws-auto#1');
    const auto = (command: string) => ({ ...run(command), requested: 'auto' as const, orRunner: true });
    expect(await pool.interpret(big.source, auto('npm test'))).toMatchObject({ forRunner: true, stdout: '' });
    expect(await pool.interpret(big.source, auto('curl http://127.0.0.1:1/'))).toMatchObject({ forRunner: true });
    expect(big.taken).toEqual({ listings: 0, files: 0 });
    expect(await pool.interpret(big.source, auto('cat x.txt'))).toMatchObject({ forRunner: false, stdout: 'x\n' });
    expect(await pool.interpret(big.source, auto('wc -l x.txt'))).toMatchObject({ stdout: '1 x.txt\n' });
    expect(big.taken).toEqual({ listings: 1, files: 1 });
    // Engine "edge" refuses what it cannot run, naming it, without a listing either.
    const refused = state({}, 'ws-edge#1');
    await expect(pool.interpret(refused.source, { ...run('npm test'), requested: 'edge' })).rejects.toMatchObject({
      code: 'invalid_argument',
      details: { command: 'npm' },
    });
    expect(refused.taken.listings).toBe(0);
  });

  it("keeps a state's tree for its next commands, none of which sees another's changes, nor another workspace's", async () => {
    const files = { 'a.txt': 'alpha\n', 'dir/b.txt': 'bravo\n' };
    // Two workspaces of one store (forks) with the same entries, blob for blob: only their states differ.
    const mine = state(files, 'fork-a#1');
    const theirs = state(files, 'fork-b#1');
    const look = run('cat a.txt dir/b.txt; ls -R; stat -c "%n %a" a.txt dir');
    const before = (await pool.interpret(mine.source, look)).stdout;
    expect(before).toContain('alpha\nbravo\n');
    expect((await pool.interpret(theirs.source, look)).stdout).toBe(before);

    const changed = await pool.interpret(
      mine.source,
      run('echo changed > a.txt; echo more >> dir/b.txt; mkdir dir/new; ln -s a.txt l; chmod 700 dir; rm -r dir/b.txt'),
    );
    expect(changed.changes.map((change) => `${change.op} ${change.path}`)).toEqual(
      expect.arrayContaining(['write a.txt', 'mkdir dir/new', 'symlink l', 'delete dir/b.txt']),
    );
    // Nothing was committed, so the state is the same: its next command sees it as it was, as does the other workspace's.
    expect((await pool.interpret(mine.source, look)).stdout).toBe(before);
    expect((await pool.interpret(theirs.source, look)).stdout).toBe(before);
    // One listing each, one content each: the next commands read the kept tree.
    expect(mine.taken).toEqual({ listings: 1, files: 2 });
    expect(theirs.taken.listings).toBe(1);

    // At once: each workspace's command sees its own writes only.
    const [a, b] = await Promise.all([
      pool.interpret(mine.source, run('echo mine > a.txt; sleep 0.2; cat a.txt')),
      pool.interpret(theirs.source, run('sleep 0.1; cat a.txt; echo theirs > a.txt; cat a.txt')),
    ]);
    expect(a.stdout).toBe('mine\n');
    expect(b.stdout).toBe('alpha\ntheirs\n');
    expect((await pool.interpret(mine.source, look)).stdout).toBe(before);
  });

  it('never gives one store the contents another was sent', async () => {
    const mine = state({ 'same.txt': 'mine\n' }, 'mine#1', 'store-a');
    await pool.interpret(mine.source, run('cat same.txt'));
    // The same path and blob name under another store: its own bytes.
    const theirs = state({ 'same.txt': 'mine\n' }, 'theirs#1', 'store-b');
    expect((await pool.interpret(theirs.source, run('cat same.txt'))).stdout).toBe('mine\n');
    expect(theirs.taken.files).toBe(1);
  });
});

describe('KeptListings', () => {
  it('keeps within its weight, the least recently used dropped first', () => {
    const kept = new KeptListings<string>(10);
    kept.keep('a', 'A', 4);
    kept.keep('b', 'B', 4);
    expect(kept.get('a')).toBe('A');
    kept.keep('c', 'C', 4);
    expect([kept.get('a'), kept.get('b'), kept.get('c')]).toEqual(['A', undefined, 'C']);
    kept.keep('big', 'X', 11);
    expect(kept.get('big')).toBeUndefined();
    expect(kept.get(undefined)).toBeUndefined();
  });

  it('tells of each value it drops, or does not keep; the states of empty workspaces weigh too', () => {
    const dropped: string[] = [];
    const kept = new KeptListings<string>(2, (value) => dropped.push(value));
    // Each state's tree costs memory of its own, entries or none: three empty states do not fit in two.
    for (const key of ['e1', 'e2', 'e3']) kept.keep(key, key.toUpperCase(), listingWeight(0));
    expect([kept.get('e1'), kept.get('e2'), kept.get('e3')]).toEqual([undefined, 'E2', 'E3']);
    kept.keep('e3', 'E3-again', listingWeight(0));
    kept.keep('too-big', 'BIG', listingWeight(2));
    kept.keep(undefined, 'UNNAMED', listingWeight(0));
    expect(dropped).toEqual(['E1', 'E3', 'BIG', 'UNNAMED']);
  });
});

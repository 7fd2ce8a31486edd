// A workspace state's tree shared by the commands run over it (edge-snapshot.ts): real edge
// commands over one snapshot, as an edge thread runs a state's commands. Whatever one command does
// (writes, appends, removals, moves, copies, modes, links, directories, times, the interpreter's
// own files), finishes or not, the next command over the state sees the state as it was; two
// commands at once see only their own changes.
import { describe, expect, it } from 'vitest';
import { interpret, snapshotOf } from '../../../src/tools/edge-bash/edge-interpreter.ts';
import type { EdgeSnapshot } from '../../../src/tools/edge-bash/edge-snapshot.ts';
import type { ManifestEntry } from '../../../src/workspace/manifest-entry.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

const FILES: Record<string, string> = {
  'a.txt': 'alpha\n',
  'b.txt': 'bravo\n',
  'c.txt': 'charlie\n',
  'd.txt': 'delta\n',
  'e.txt': 'echo\n',
  'f.txt': 'foxtrot\n',
  'g.txt': 'golf\n',
  'h.txt': 'hotel\n',
  'i.txt': 'india\n',
  'j.txt': 'juliett\n',
  'k.txt': 'kilo x\n',
  'dir/x.txt': 'x-ray\n',
  'dir/sub/y.txt': 'yankee\n',
  'deep/d1/d2/z.txt': 'zulu\n',
};

/** A workspace state of FILES and two links, its snapshot made as a thread makes it, and commands run over it. */
async function state(): Promise<{ snapshot: EdgeSnapshot; run: Run }> {
  const entries: ManifestEntry[] = [
    ...Object.entries(FILES).map(([path, content]) => ({
      path,
      type: 'file' as const,
      blob: `blob:${content}`,
      target: null,
      size: bytes(content).byteLength,
      version: 1,
    })),
    { path: 'link', type: 'symlink', blob: null, target: 'a.txt', size: 0, version: 1 },
    { path: 'dir/up', type: 'symlink', blob: null, target: '../b.txt', size: 0, version: 1 },
  ];
  const snapshot = await snapshotOf(entries, { scope: 'store' });
  const source = { entries, snapshot, read: async (path: string) => bytes(FILES[path]!) };
  const run: Run = (command, options = {}) =>
    interpret(source, {
      command,
      cwd: '',
      env: {},
      timeoutMs: options.timeoutMs ?? 10_000,
      orRunner: options.orRunner,
    });
  return { snapshot, run };
}

type Run = (command: string, options?: { timeoutMs?: number; orRunner?: boolean }) => ReturnType<typeof interpret>;

/** Everything a command can see of the state: names, kinds, modes, sizes, times, contents, link targets, and the interpreter's files. */
const LOOK =
  'ls -laR /workspace /tmp; ' +
  'for p in $(find /workspace | sort); do stat -c "%n %a %s" $p; done; ' +
  'for f in $(find /workspace -type f | sort); do echo "$f: $(cat $f)"; done; ' +
  'for l in $(find /workspace -type l | sort); do echo "$l -> $(readlink $l)"; done; ' +
  'ls /bin | wc -l; cat /bin/cat; ls /usr/bin/ls; cat /proc/version; ' +
  // The edge's own grep -r, whose walk of a shared directory is made once and kept.
  'grep -rln a deep dir/sub; grep -rn u deep dir/sub; cd dir && grep -rn e sub';

/** A command that changes every kind of node, and succeeds. */
const CHANGE_EVERYTHING = [
  'echo new > a.txt',
  'echo more >> b.txt',
  'rm c.txt',
  'mv d.txt moved.txt',
  'cp e.txt e-copy.txt',
  'cp e.txt f.txt',
  'chmod 600 g.txt',
  'chmod 700 dir',
  'ln -s a.txt new-link',
  'ln -s ../../a.txt dir/sub/new-link',
  'rm link',
  'mkdir dir/sub/made newdir',
  'touch -d "2001-01-01 00:00:00" h.txt dir/sub',
  ': > i.txt',
  'ln j.txt j-hard.txt && echo through-hard >> j-hard.txt',
  'sed -i s/x/y/ k.txt',
  'echo via-link >> dir/up',
  'rm -r deep',
  'mv dir/sub dir/moved-sub',
  'echo over > /bin/cat && rm /usr/bin/ls && echo t > /tmp/t && echo v > /proc/version',
].join(' && ');

describe("a workspace state's tree, shared by its commands", () => {
  it('shows the next command the state as it was, whatever the last one changed', async () => {
    const { run } = await state();
    const before = await run(LOOK);
    expect(before).toMatchObject({ exitCode: 0, stderr: '' });
    expect(before.stdout).toContain('/workspace/a.txt: alpha');
    expect(before.stdout).toMatch(/\ndir\/sub\/y.txt\ndeep\/d1\/d2\/z.txt:1:zulu\nsub\/y.txt:1:yankee\n$/);

    const changed = await run(`${CHANGE_EVERYTHING} && ${LOOK}`);
    expect(changed.stderr).toContain('ls: /usr/bin/ls: No such file or directory\n');
    // It saw its own changes, and reports them.
    expect(changed.stdout).toContain('/workspace/a.txt: new');
    expect(changed.stdout).toContain('/workspace/j.txt: juliett\nthrough-hard');
    expect(changed.stdout).toContain('/workspace/b.txt: bravo\nmore\nvia-link');
    expect(changed.stdout).toContain('/workspace/g.txt 600');
    expect(changed.stdout).toContain('/workspace/dir 700');
    expect(changed.stdout).not.toContain('/workspace/deep');
    expect(changed.changes.map((change) => `${change.op} ${change.path}`)).toEqual(
      expect.arrayContaining([
        'write a.txt',
        'write b.txt',
        'delete c.txt',
        'write moved.txt',
        'delete d.txt',
        'write e-copy.txt',
        'write f.txt',
        'symlink new-link',
        'delete link',
        'mkdir newdir',
        'write i.txt',
        'write j-hard.txt',
        'write k.txt',
        'delete deep/d1/d2/z.txt',
        'mkdir dir/moved-sub',
        'write dir/moved-sub/y.txt',
        'delete dir/sub/y.txt',
      ]),
    );

    expect(await run(LOOK)).toEqual(before);
    // And again, after a command that changed the same nodes once more.
    await run(CHANGE_EVERYTHING);
    expect(await run(LOOK)).toEqual(before);
  });

  it('leaves nothing of a command that fails, stops at its timeout or is given back: its writes were its own', async () => {
    const { run } = await state();
    const before = await run(LOOK);

    const failed = await run('echo staged > a.txt && mkdir staged && rm -r dir && chmod 000 b.txt && exit 3');
    expect(failed.exitCode).toBe(3);
    expect(await run(LOOK)).toEqual(before);

    const stopped = await run('echo staged > a.txt; rm -r dir; sleep 5', { timeoutMs: 200 });
    expect(stopped).toMatchObject({ timedOut: true, exitCode: 137 });
    expect(await run(LOOK)).toEqual(before);

    // A redirection into a missing directory: auto gives the command to a runner, keeping nothing.
    const givenBack = await run('echo staged > a.txt; rm -r dir; echo x > missing/f.txt', { orRunner: true });
    expect(givenBack).toMatchObject({ forRunner: true, changes: [] });
    expect(await run(LOOK)).toEqual(before);
  });

  it('keeps two commands at once apart: each sees its own changes and none of the other', async () => {
    const { run } = await state();
    const [writer, reader] = await Promise.all([
      run('echo mine > a.txt; rm dir/x.txt; chmod 600 b.txt; sleep 0.2; cat a.txt; ls dir; stat -c "%a" b.txt'),
      run('sleep 0.1; cat a.txt; ls dir; stat -c "%a" b.txt; echo theirs > a.txt; sleep 0.2; cat a.txt'),
    ]);
    expect(writer.stdout).toBe('mine\nsub\nup\n600\n');
    expect(reader.stdout).toBe('alpha\nsub\nup\nx.txt\n644\ntheirs\n');
  });
});

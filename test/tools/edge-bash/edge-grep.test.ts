// The edge engine's own grep (edge-grep.ts) against the interpreter's: for every command its fast
// path takes, the same stdout, stderr and exit code as just-bash's grep gives over the same files
// (the grep the differential test compares with GNU's); for every other, the interpreter's answer.
import { Bash, parse } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { EDGE_WORKSPACE, EdgeCopy, type EdgeSource } from '../../../src/tools/edge-bash/edge-copy.ts';
import { edgeGrep, loneGrep, planOf } from '../../../src/tools/edge-bash/edge-grep.ts';
import { interpret, snapshotOf } from '../../../src/tools/edge-bash/edge-interpreter.ts';
import { loneCommand } from '../../../src/tools/edge-bash/edge-script.ts';
import type { ManifestEntry } from '../../../src/workspace/manifest-entry.ts';

const bytes = (text: string | Uint8Array) => (typeof text === 'string' ? new TextEncoder().encode(text) : text);

const TREE: Record<string, string | Uint8Array> = {
  'a.txt': 'TODO first\nnothing\nTODO TODO twice\n',
  'b.md': 'no newline at the end TODO',
  'empty.txt': '',
  'only-newline.txt': '\n',
  'crlf.txt': 'TODO with cr\r\nplain\r\n',
  'unicode.txt': 'été TODO ünï\n日本 TODO\n',
  'binary.bin': new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0xff, 0xfe, 0x0a, 0x00, 0x54, 0x4f, 0x44, 0x4f]),
  'with space.txt': 'a b TODO\n',
  '.hidden': 'TODO hidden\n',
  '.git/config': 'TODO in git\n',
  'src/.env': 'TODO=1\n',
  'src/main.ts': '// TODO one\nconst x = 1;\n// todo lower\n',
  'src/util/deep/deeper/x.ts': 'TODO deep\n',
  'src/util/y.ts': 'nothing here\n',
  'src/zz.ts': 'TODO: last\n',
  'docs/a b/c.txt': 'TODO in a spaced dir\n',
};

function sourceOf(files: Record<string, string | Uint8Array>, links: Record<string, string> = {}): EdgeSource {
  const dirs = new Set<string>();
  for (const path of [...Object.keys(files), ...Object.keys(links)]) {
    const names = path.split('/');
    for (let end = 1; end < names.length; end += 1) dirs.add(names.slice(0, end).join('/'));
  }
  const entries: ManifestEntry[] = [
    ...[...dirs].map((path) => ({ path, type: 'dir' as const, blob: null, target: null, size: 0, version: 1 })),
    ...Object.entries(files).map(([path, content]) => ({
      path,
      type: 'file' as const,
      blob: path,
      target: null,
      size: bytes(content).byteLength,
      version: 1,
    })),
    ...Object.entries(links).map(([path, target]) => ({
      path,
      type: 'symlink' as const,
      blob: null,
      target,
      size: 0,
      version: 1,
    })),
  ].sort((a, b) => (a.path < b.path ? -1 : 1));
  return {
    entries,
    read: async (path) => bytes(files[path]!).slice(),
    readMany: async (many) => many.map((entry) => bytes(files[entry.path]!).slice()),
  };
}

/** The command on the interpreter's grep, and on the edge's; how many times the fast path answered. */
async function both(source: EdgeSource, command: string, cwd = EDGE_WORKSPACE) {
  const plain = await EdgeCopy.of(source);
  const theirs = await new Bash({ fs: plain.fs, cwd }).exec(command);
  const copy = await EdgeCopy.of(source);
  let fast = 0;
  const ours = await new Bash({ fs: copy.fs, cwd, customCommands: [edgeGrep(copy.fs, () => (fast += 1))] }).exec(
    command,
  );
  const answer = (result: typeof theirs) => ({
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exitCode,
  });
  return { theirs: answer(theirs), ours: answer(ours), fast };
}

/** Runs each command both ways: the same answer, and the fast path taken `fast` times (1 or 0) for each. */
async function expectSameAnswers(source: EdgeSource, commands: readonly string[], fast: 0 | 1, cwd = EDGE_WORKSPACE) {
  for (const command of commands) {
    const run = await both(source, command, cwd);
    expect({ command, ...run.ours }).toEqual({ command, ...run.theirs });
    expect({ command, fast: run.fast }).toEqual({ command, fast });
  }
}

const FAST = [
  'grep -rn TODO .',
  'grep -r TODO .',
  'grep -rl TODO .',
  'grep -rln TODO src docs',
  'grep -R TODO src',
  'grep -rnF TODO ./src',
  'grep -nr TODO src/',
  'grep -r -n TODO a.txt src b.md',
  'grep -rn TODO .git',
  'grep -rn TODO src/.env',
  'grep -rn nowhere .',
  'grep -rn "été" .',
  'grep -rn "a b" .',
  'grep -rn "TODO TODO" .',
  'grep -rn TODO "docs/a b"',
  'grep -rn todo src',
  'grep -rn : src',
  'grep -rn TODO . | wc -l',
  'grep -rl TODO . && echo found',
  'grep -r nowhere . || echo "none: $?"',
  'grep -rn TODO src src',
  'grep -rn DO\\ f .',
];

const GIVEN_BACK = [
  'grep -rn missing-path-TODO missing',
  'grep -rn TODO missing src',
  'grep -rn "TO.O" .',
  'grep -rni todo src',
  'grep -rc TODO src',
  'grep -rh TODO src',
  'grep -rn -- TODO src',
  'grep -rn TODO "src/*.ts"',
  'grep -n TODO a.txt',
  'grep -rw TODO src',
  'grep -rE "TODO|one" src',
  'grep -rn "TODO$" .',
  'grep -rn "[T]ODO" .',
  'echo TODO | grep -r TODO',
  'grep -rn -e TODO src',
  'grep -rn TODO',
  'grep -rn --include=*.ts TODO .',
];

describe("the edge's grep", () => {
  it('takes the plain recursive searches and answers them as the interpreter does', async () => {
    await expectSameAnswers(sourceOf(TREE), FAST, 1);
  });

  it('answers the same from a directory below, and with the workspace as cwd named by ..', async () => {
    const commands = ['grep -rn TODO ..', 'grep -rn TODO .', 'grep -rl TODO ../util/deep ../../docs'];
    await expectSameAnswers(sourceOf(TREE), commands, 1, `${EDGE_WORKSPACE}/src/util`);
  });

  it('gives every other use back to the interpreter, with its answer', async () => {
    await expectSameAnswers(sourceOf(TREE), GIVEN_BACK, 0);
  });

  it('gives a walk that meets a link back (the interpreter follows them its own way)', async () => {
    const source = sourceOf(TREE, { 'src/link-dir': 'util', 'src/link-file': 'main.ts', 'up/out': '../src' });
    await expectSameAnswers(
      source,
      ['grep -rn TODO .', 'grep -rn TODO src', 'grep -rn TODO up/out', 'grep -rl TODO up'],
      0,
    );
    // A walk that meets none still takes the fast path.
    await expectSameAnswers(source, ['grep -rn TODO docs'], 1);
  });

  it('finds a word in the bytes exactly where the text holds it: beside invalid UTF-8, at either end, in repeats', async () => {
    const source = sourceOf({
      'invalid.bin': new Uint8Array([0xe2, 0x82, 0x61, 0x62, 0x61, 0x62, 0x63, 0xff, 0x0a, 0xc3, 0x61, 0x62, 0x63]),
      'ends.txt': 'abc in the middle\nand at the end abc',
      'repeats.txt': 'aab aaab ababab abcabc\nxyz\n',
      'split.txt': 'ab\nc abX\n',
      'wide.txt': '日本abc語 ééabcéé\n',
      'only.txt': 'abc',
      'short.txt': 'ab',
    });
    await expectSameAnswers(
      source,
      ['grep -rn abc .', 'grep -rn ab .', 'grep -rl abab .', 'grep -rn c .', 'grep -rn "日本" .', 'grep -rn "b a" .'],
      1,
    );
  });

  it('reads only plain words with the flags it knows', () => {
    expect(planOf(['-rn', 'TODO', '.'])).toEqual({
      word: 'TODO',
      operands: ['.'],
      lineNumbers: true,
      filesOnly: false,
    });
    expect(planOf(['-r', 'TODO'])).toBeUndefined();
    for (const word of ['a.b', 'a*', '^a', 'a$', '[a]', 'a\\b', 'a+', 'a?', '(a)', 'a{1}', 'a|b', ''])
      expect({ word, plan: planOf(['-r', word, '.']) }).toEqual({ word, plan: undefined });
  });

  it('answers a script that is one grep the fast path takes without the interpreter, as the interpreter does', async () => {
    const source = sourceOf(TREE);
    const limits = { maxGlobOperations: 1_000_000, maxArrayElements: 1_000_000, maxLoopIterations: 100_000 };
    let alone = 0;
    for (const command of FAST) {
      const lone = loneCommand(parse(command));
      if (lone === undefined) continue;
      const copy = await EdgeCopy.of(source);
      const answer = await loneGrep(copy.fs, lone.args, { cwd: EDGE_WORKSPACE, limits }, 1_000_000);
      const theirs = (await both(source, command)).theirs;
      expect({ command, ...answer }).toEqual({ command, ...theirs });
      alone += 1;
    }
    expect(alone).toBeGreaterThan(15);
    // An answer longer than `maxOutputChars` is the interpreter's to give (and to cut).
    const copy = await EdgeCopy.of(source);
    expect(await loneGrep(copy.fs, ['-rn', 'TODO', '.'], { cwd: EDGE_WORKSPACE, limits }, 20)).toBeUndefined();
  });

  it('runs every grep script as the interpreter does, alone or not, with expansions and from a directory below', async () => {
    const env = { WORD: 'TODO', DIR: 'src' };
    const commands = [
      ...FAST,
      ...GIVEN_BACK,
      'grep -rn "$WORD" .',
      'grep -rn "x$WORD" .',
      'grep -rn $WORD $DIR',
      'grep -rn TODO ~',
      'grep -rn TODO */',
      'grep -rn TODO {src,docs}',
      'grep -rn TODO . > hits.txt; cat hits.txt',
      '! grep -rn TODO .',
      'LC_ALL=C grep -rn TODO src',
    ];
    for (const cwd of ['', 'src']) {
      for (const command of commands) {
        const source = sourceOf(TREE);
        const ours = await interpret(source, { command, cwd, env, timeoutMs: 60_000 });
        const at = cwd === '' ? EDGE_WORKSPACE : `${EDGE_WORKSPACE}/${cwd}`;
        const plain = await EdgeCopy.of(source);
        const theirs = await new Bash({ fs: plain.fs, cwd: at, env: { HOME: '/tmp', PWD: at, ...env } }).exec(command);
        expect({ command, cwd, stdout: ours.stdout, stderr: ours.stderr, exitCode: ours.exitCode }).toEqual({
          command,
          cwd,
          stdout: theirs.stdout,
          stderr: theirs.stderr,
          exitCode: theirs.exitCode,
        });
      }
    }
  });

  it("searches a state's walks as one text from their second search on: the same answers, never another state's or a command's own changes", async () => {
    const other: Record<string, string | Uint8Array> = {};
    for (const [path, content] of Object.entries(TREE))
      other[path] = typeof content === 'string' ? content.replaceAll('TODO', 'DONE').replaceAll('été', 'ete') : content;
    Object.assign(other, { 'src/main.ts': 'TODO only here\nand TODO here\n', 'src/zz.ts': 'été TODO\n' });
    const states = await Promise.all(
      [TREE, other].map(async (files) => {
        const source = sourceOf(files);
        return { files, source: { ...source, snapshot: await snapshotOf(source.entries, { scope: 'store' }) } };
      }),
    );
    const commands = [
      'grep -rn TODO .',
      'grep -rl TODO .',
      'grep -r TODO src docs',
      'grep -rn TODO src src',
      'grep -rn "été" .',
      'grep -rn TODO a.txt src',
      'grep -rn e src',
      'grep -rn nowhere .',
    ];
    const expectPlainAnswer = async (state: (typeof states)[number], command: string) => {
      const ours = await interpret(state.source, { command, cwd: '', env: {}, timeoutMs: 60_000 });
      const { theirs } = await both(sourceOf(state.files), command);
      expect({ command, stdout: ours.stdout, stderr: ours.stderr, exitCode: ours.exitCode }).toEqual({
        command,
        ...theirs,
      });
    };
    for (let round = 0; round < 3; round += 1)
      for (const state of states) for (const command of commands) await expectPlainAnswer(state, command);
    // A command's own change below a walk the state keeps as text, and after it the state as it was.
    const [first] = states;
    await expectPlainAnswer(first!, 'echo "TODO added" >> src/util/y.ts; grep -rn TODO .');
    await expectPlainAnswer(first!, 'rm src/main.ts && grep -rl TODO src');
    await expectPlainAnswer(first!, 'grep -rn TODO .');
  });
});

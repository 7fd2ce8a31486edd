// apply_patch over real HTTP, through the typed client: result fields, formats, line endings, errors a model can act on, atomicity.
import { describe, expect, it } from 'vitest';
import { useServer } from '../support/server-process.ts';
import { failure, outcome, resultOf } from '../support/tool-outcome.ts';

const server = useServer();

let counter = 0;
async function workspace(files: Record<string, string> = {}): Promise<string> {
  const ws = `patch-${(counter += 1)}`;
  await server.client.putWorkspace(ws);
  for (const [path, content] of Object.entries(files)) {
    expect(await outcome(server.client.writeFile(ws, { path, content }))).toEqual([200, undefined]);
  }
  return ws;
}
// The result of a call answered 200; any other answer throws (see `outcome` and `failure`).
const patchIn = async (ws: string, patch: string, dryRun?: boolean) =>
  resultOf(await server.client.applyPatch(ws, dryRun === undefined ? { patch } : { patch, dryRun }));
const readIn = async (ws: string, path: string) =>
  resultOf(await server.client.readFile(ws, { path, maxChars: 10_000_000 })).content;
const versionOf = async (ws: string) => (await server.client.getWorkspace(ws)).version;
const envelope = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');

describe('results', () => {
  it('reports files with action, movedTo and a unified diff, and a summary A, then M, then D', async () => {
    const ws = await workspace({ 'mod.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'old/name.txt': 'from\n' });
    const patch = envelope(
      '*** Delete File: gone.txt',
      '*** Update File: mod.txt',
      '@@',
      ' one',
      '-two',
      '+deux',
      '*** Update File: old/name.txt',
      '*** Move to: new/name.txt',
      '@@',
      '-from',
      '+to',
      '*** Add File: added.txt',
      '+hello',
    );
    const dry = await patchIn(ws, patch, true);
    expect(dry.dryRun).toBe(true);
    expect(await readIn(ws, 'mod.txt')).toBe('one\ntwo\n');
    const { files, summary, dryRun } = await patchIn(ws, patch);
    expect(dryRun).toBe(false);
    expect(summary).toBe('A added.txt\nM mod.txt\nM new/name.txt\nD gone.txt');
    expect(files.map((file) => [file.path, file.action, file.movedTo])).toEqual([
      ['gone.txt', 'delete', undefined],
      ['mod.txt', 'update', undefined],
      ['old/name.txt', 'move', 'new/name.txt'],
      ['added.txt', 'add', undefined],
    ]);
    expect(files[1]!.diff).toBe('--- a/mod.txt\n+++ b/mod.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+deux\n');
    expect(files[3]!.diff).toContain('--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1,1 @@\n+hello\n');
    expect(files[0]!.diff).toContain('+++ /dev/null');
    expect(dry.files).toEqual(files);
    expect(await readIn(ws, 'mod.txt')).toBe('one\ndeux\n');
    expect(await readIn(ws, 'new/name.txt')).toBe('to\n');
    expect(await readIn(ws, 'added.txt')).toBe('hello\n');
    for (const path of ['gone.txt', 'old/name.txt']) {
      expect((await outcome(server.client.readFile(ws, { path })))[0]).toBe(404);
    }
  });

  it('applies a git-style unified diff with several files, /dev/null add and delete', async () => {
    const ws = await workspace({ 'src/a.ts': 'const a = 1;\nexport { a };\n', 'old.txt': 'x\n' });
    const diff = [
      'diff --git a/src/a.ts b/src/a.ts',
      '--- a/src/a.ts',
      '+++ b/src/a.ts',
      '@@ -1,2 +1,2 @@',
      '-const a = 1;',
      '+const a = 2;',
      ' export { a };',
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1,2 @@',
      '+first',
      '+second',
      'diff --git a/old.txt b/old.txt',
      'deleted file mode 100644',
      '--- a/old.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-x',
      '',
    ].join('\n');
    const result = await patchIn(ws, diff);
    expect(result.summary).toBe('A new.txt\nM src/a.ts\nD old.txt');
    expect(await readIn(ws, 'src/a.ts')).toBe('const a = 2;\nexport { a };\n');
    expect(await readIn(ws, 'new.txt')).toBe('first\nsecond\n');
  });

  it('keeps CRLF files CRLF and a missing final newline missing', async () => {
    const ws = await workspace({ 'win.txt': 'a\r\nb\r\nc\r\n', 'tail.txt': 'x\ny' });
    await patchIn(
      ws,
      envelope('*** Update File: win.txt', '@@', ' a', '-b', '+B', '*** Update File: tail.txt', '@@', ' x', '-y', '+z'),
    );
    expect(await readIn(ws, 'win.txt')).toBe('a\r\nB\r\nc\r\n');
    expect(await readIn(ws, 'tail.txt')).toBe('x\nz');
  });
});

describe('errors a model can correct in one step, and nothing changes', () => {
  it('patch_conflict names the file, the hunk and the lines not found', async () => {
    const ws = await workspace({ 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'keep\n' });
    const before = await versionOf(ws);
    const error = await failure(
      patchIn(
        ws,
        envelope(
          '*** Update File: b.txt',
          '@@',
          '-keep',
          '+changed',
          '*** Update File: a.txt',
          '@@',
          ' one',
          '-two',
          '+2',
          '@@',
          ' three',
          '-four',
          '+4',
        ),
      ),
    );
    expect(error.status).toBe(409);
    expect(error).toMatchObject({ code: 'patch_conflict', details: { path: 'a.txt', hunk: 2 } });
    expect(JSON.stringify(error.details)).toContain('four');
    expect(error.message).toContain('a.txt');
    expect(await readIn(ws, 'b.txt')).toBe('keep\n');
    expect(await versionOf(ws)).toBe(before);
  });

  it('patch_invalid carries the 1-based patch line', async () => {
    const ws = await workspace({ 'a.txt': 'x\n' });
    const error = await failure(patchIn(ws, envelope('*** Update File: a.txt', '@@', '-x', '+y', 'garbage line')));
    expect(error.status).toBe(400);
    expect(error).toMatchObject({ code: 'patch_invalid', details: { line: 6 } });
  });

  it.each([
    ['a missing end marker', '*** Begin Patch\n*** Add File: n.txt\n+x\n', 'patch_invalid', 400],
    ['a hunk with no lines', envelope('*** Update File: a.txt', '@@'), 'patch_invalid', 400],
    ['+ lines outside a hunk', envelope('*** Delete File: a.txt', '+stray'), 'patch_invalid', 400],
    ['Move to without Update', envelope('*** Move to: b.txt', '@@', '-x', '+y'), 'patch_invalid', 400],
    ['an empty patch', envelope(), 'patch_invalid', 400],
    ['a path escaping with ..', envelope('*** Add File: ../evil.txt', '+x'), 'path_outside_workspace', 403],
    [
      'a Move to target escaping',
      envelope('*** Update File: a.txt', '*** Move to: ../../x.txt', '@@', '-x', '+y'),
      'path_outside_workspace',
      403,
    ],
    ['a patch touching .git/hooks', envelope('*** Add File: .git/hooks/pre-commit', '+#!/bin/sh'), 'path_denied', 403],
    [
      "a patch touching a submodule's hooks below .git",
      envelope('*** Add File: .git/modules/lib/hooks/post-checkout', '+#!/bin/sh'),
      'path_denied',
      403,
    ],
    [
      'a patch touching .ssh via Move to',
      envelope('*** Update File: a.txt', '*** Move to: .ssh/authorized_keys', '@@', '-x', '+y'),
      'path_denied',
      403,
    ],
    ['an invalid path', envelope('*** Add File: a\\b.txt', '+x'), 'invalid_argument', 400],
    ['an update of a missing file', envelope('*** Update File: missing.txt', '@@', '-x', '+y'), 'not_found', 404],
  ])('%s is refused and nothing changes', async (_name, patch, code, status) => {
    const ws = await workspace({ 'a.txt': 'x\n' });
    const before = await versionOf(ws);
    // Each refusal also follows a valid operation, so a partial application would show (an
    // empty patch has no operation to follow).
    const withValidFirst = patch.replace('*** Begin Patch\n', '*** Begin Patch\n*** Add File: first.txt\n+1\n');
    for (const attempt of patch === envelope() ? [patch] : [patch, withValidFirst]) {
      const [answered, answeredCode] = await outcome(patchIn(ws, attempt));
      expect({ status: answered, code: answeredCode }).toEqual({ status, code });
    }
    expect(await versionOf(ws)).toBe(before);
    expect(await readIn(ws, 'a.txt')).toBe('x\n');
  });
});

describe('size', () => {
  it('applies 200 hunks to a 5,000-line file', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} of the big file`);
    const ws = await workspace({ 'big.txt': `${lines.join('\n')}\n` });
    const hunks: string[] = [];
    const expected = [...lines];
    for (let h = 0; h < 200; h += 1) {
      const at = h * 25 + 10;
      hunks.push('@@', ` ${lines[at - 1]}`, `-${lines[at]}`, `+changed ${at}`, ` ${lines[at + 1]}`);
      expected[at] = `changed ${at}`;
    }
    await patchIn(ws, envelope('*** Update File: big.txt', ...hunks));
    expect(await readIn(ws, 'big.txt')).toBe(`${expected.join('\n')}\n`);
  });

  it('parses and applies a 2 MB patch', async () => {
    const ws = await workspace();
    const line = `+${'z'.repeat(99)}`;
    const body = Array.from({ length: 20_480 }, () => line);
    await patchIn(ws, envelope('*** Add File: two-megabytes.txt', ...body));
    const info = await server.client.getWorkspace(ws);
    expect(info.bytes).toBe(20_480 * 100);
  });

  it('commits a patch of 1,000 small files atomically: all land, or none when one hunk fails', async () => {
    const ws = await workspace({ 'guard.txt': 'stay\n' });
    const adds = Array.from({ length: 1000 }, (_, i) => [`*** Add File: many/f${i}.txt`, `+file ${i}`]).flat();
    const failing = await outcome(patchIn(ws, envelope(...adds, '*** Update File: guard.txt', '@@', '-absent', '+x')));
    expect(failing[1]).toBe('patch_conflict');
    expect((await server.client.getWorkspace(ws)).files).toBe(1);
    const passing = await patchIn(ws, envelope(...adds));
    expect(passing.files).toHaveLength(1000);
    expect((await server.client.getWorkspace(ws)).files).toBe(1001);
    expect(await readIn(ws, 'many/f999.txt')).toBe('file 999\n');
  });
});

// parsePatch: both formats, what they become, and the line every refusal points at.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/core/errors.ts';
import { parseCodexPatch } from '../../../src/tools/apply-patch/parse-codex.ts';
import { parsePatch, parsePatchSliced } from '../../../src/tools/apply-patch/parse-patch.ts';
import { parseUnifiedDiff } from '../../../src/tools/apply-patch/parse-unified.ts';
import { WorkBudget } from '../../../src/core/work-budget.ts';

function refusal(text: string, parse: (text: string) => unknown = parsePatch): ToolError {
  try {
    parse(text);
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('expected the patch to be refused');
}

function expectInvalid(text: string, line: number, message: RegExp): void {
  const error = refusal(text);
  expect(error.code).toBe('patch_invalid');
  expect(error.details?.line).toBe(line);
  expect(error.message).toMatch(message);
  expect(error.message.startsWith(`line ${line}: `)).toBe(true);
}

const wrap = (body: string): string => `*** Begin Patch\n${body}\n*** End Patch\n`;

describe('parsePatch: the Codex envelope', () => {
  it('parses add, delete, update and move', () => {
    const parsed = parsePatch(
      wrap(
        '*** Add File: a.txt\n+one\n+\n*** Delete File: b.txt\n*** Update File: c.txt\n*** Move to: d/c.txt\n@@ def f():\n-    pass\n+    return 1',
      ),
    );
    expect(parsed).toEqual({
      format: 'codex',
      operations: [
        { kind: 'add', path: 'a.txt', contents: 'one\n\n', line: 2 },
        { kind: 'delete', path: 'b.txt', line: 5 },
        {
          kind: 'update',
          path: 'c.txt',
          moveTo: 'd/c.txt',
          line: 6,
          hunks: [
            { anchors: ['def f():'], oldLines: ['    pass'], newLines: ['    return 1'], endOfFile: false, line: 8 },
          ],
        },
      ],
    });
  });

  it('gives an add with no lines empty contents', () => {
    expect(parsePatch(wrap('*** Add File: empty.txt')).operations).toEqual([
      { kind: 'add', path: 'empty.txt', contents: '', line: 2 },
    ]);
  });

  it('collects stacked @@ headers as anchors of one hunk', () => {
    const [operation] = parsePatch(
      wrap('*** Update File: a.py\n@@ class A:\n@@\n@@   def run(self):\n-x\n+y'),
    ).operations;
    expect(operation).toMatchObject({
      hunks: [{ anchors: ['class A:', '  def run(self):'], oldLines: ['x'], newLines: ['y'], line: 3 }],
    });
  });

  it('lets only the first hunk start without @@, reads an empty line as empty context, and ends a hunk at End of File', () => {
    const [operation] = parsePatch(wrap('*** Update File: a\n a\n\n-b\n+c\n*** End of File\n\n@@\n d\n+e')).operations;
    expect(operation).toMatchObject({
      hunks: [
        { anchors: [], oldLines: ['a', '', 'b'], newLines: ['a', '', 'c'], endOfFile: true, line: 3 },
        { anchors: [], oldLines: ['d'], newLines: ['d', 'e'], endOfFile: false, line: 9 },
      ],
    });
  });

  it('tolerates padded markers and headers, CRLF, blank lines around the envelope and a heredoc wrapper', () => {
    const expected = [
      {
        kind: 'update',
        path: 'f.txt',
        line: 2,
        hunks: [{ anchors: [], oldLines: ['one'], newLines: ['two'], endOfFile: false, line: 3 }],
      },
    ];
    expect(
      parsePatch(' *** Begin Patch \n  *** Update File:  f.txt \n@@\n-one\n+two\n*** End Patch  ').operations,
    ).toEqual(expected);
    expect(
      parsePatch('*** Begin Patch\r\n*** Update File: f.txt\r\n@@\r\n-one\r\n+two\r\n*** End Patch\r\n').operations,
    ).toEqual(expected);
    const shifted = [{ ...expected[0], line: 3, hunks: [{ ...expected[0]!.hunks[0], line: 4 }] }];
    expect(
      parsePatch('\n*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+two\n*** End Patch\n\n').operations,
    ).toEqual(shifted);
    for (const opener of ['<<EOF', "<<'EOF'", '<<"EOF"']) {
      expect(
        parsePatch(`${opener}\n*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+two\n*** End Patch\nEOF\n`)
          .operations,
      ).toEqual(shifted);
    }
  });

  it('keeps paths as written, only trimmed', () => {
    const [operation] = parsePatch(wrap('*** Delete File:   /abs/../odd path.txt  ')).operations;
    expect(operation).toMatchObject({ path: '/abs/../odd path.txt' });
  });

  it('parses a 2 MB patch', () => {
    const added = Array.from({ length: 40_000 }, (_, index) => `+const value${index} = ${'x'.repeat(30)};`).join('\n');
    const hunks = Array.from(
      { length: 2000 },
      (_, index) => `@@ function f${index}() {\n-  return ${index};\n+  return ${index + 1};`,
    ).join('\n');
    const text = wrap(`*** Add File: big.ts\n${added}\n*** Update File: other.ts\n${hunks}`);
    expect(text.length).toBeGreaterThan(2_000_000);
    const parsed = parsePatch(text);
    expect(parsed.operations).toHaveLength(2);
    expect(parsed.operations[1]).toMatchObject({ hunks: { length: 2000 } });
  });

  it('parses a Codex envelope in slices: as parsePatch does, with the event loop let run in between', async () => {
    const hunks = Array.from({ length: 60_000 }, (_, index) => `@@\n-v${index}\n+w${index}`).join('\n');
    const text = wrap(`*** Update File: many.txt\n${hunks}\n*** Delete File: gone.txt`);
    // A clock whose slices are over at once: every step lets the event loop run.
    const clock = new WorkBudget(Number.POSITIVE_INFINITY, 0);
    let turns = 0;
    let parsing = true;
    const tick = () => {
      turns += 1;
      if (parsing) setImmediate(tick);
    };
    setImmediate(tick);
    try {
      expect(await parsePatchSliced(text, clock)).toEqual(parsePatch(text));
    } finally {
      parsing = false;
    }
    expect(turns).toBeGreaterThan(10);
    await expect(parsePatchSliced(wrap('*** Update File: f\n@@\n?x'), clock)).rejects.toMatchObject({
      code: 'patch_invalid',
      details: { line: 4 },
    });
  });
});

describe('parsePatch: Codex refusals point at the offending line', () => {
  it('refuses a patch with no file operations', () => {
    expectInvalid('*** Begin Patch\n*** End Patch', 2, /the patch contains no file operations/);
    expectInvalid('*** Begin Patch\n\n*** End Patch\n', 3, /the patch contains no file operations/);
  });

  it('refuses a missing Begin or End marker', () => {
    expectInvalid('*** Update File: a\n@@\n-a\n+b\n*** End Patch', 1, /must start with '\*\*\* Begin Patch'/);
    expectInvalid('*** Add File: a\n+x', 1, /must start with '\*\*\* Begin Patch'/);
    expectInvalid(
      '*** Begin Patch\n*** Add File: a\n+x\n',
      3,
      /expected '\*\*\* End Patch' as the last line of the patch; got '\+x'/,
    );
    expectInvalid('*** Begin Patch', 1, /expected '\*\*\* End Patch'.*got nothing after it/);
    expectInvalid(
      '<<EOF\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n',
      5,
      /expected 'EOF' to close the heredoc opened on line 1/,
    );
    const error = refusal('bad', parseCodexPatch);
    expect(error.details).toEqual({ line: 1 });
    expect(error.message).toMatch(/expected '\*\*\* Begin Patch' as the first line/);
  });

  it('refuses an update with no hunks, and a hunk with no lines', () => {
    expectInvalid(wrap('*** Update File: foo.txt'), 2, /the update of 'foo.txt' has no hunks/);
    expectInvalid(wrap('*** Update File: foo.txt\n*** Move to: bar.txt'), 2, /has no hunks/);
    expectInvalid(wrap('*** Update File: a\n@@'), 4, /expected hunk lines after the '@@' header on line 3/);
    expectInvalid(
      wrap('*** Update File: a\n@@ x\n*** End of File'),
      4,
      /expected hunk lines after the '@@' header on line 3/,
    );
    expectInvalid(wrap('*** Update File: a\n@@\n-a\n+b\n@@\n*** Delete File: b'), 7, /after the '@@' header on line 6/);
  });

  it('refuses hunk lines where they do not belong', () => {
    expectInvalid(
      wrap('*** Update File: a\nfoo'),
      3,
      /expected a hunk line starting with ' ', '\+' or '-', or '@@', or a '\*\*\* ' file header; got 'foo'/,
    );
    expectInvalid(wrap('*** Update File: a\n@@\n-a\nfoo'), 5, /expected a hunk line .*got 'foo'/);
    expectInvalid(wrap('*** Update File: a\n@@\n-a\n*** End of File\n-b'), 6, /expected '@@' to start the next hunk/);
    expectInvalid(wrap('*** Delete File: a\n+x'), 3, /expected a '\*\*\* ' file header; got '\+x'/);
    expectInvalid(wrap('+x'), 2, /expected a '\*\*\* ' file header; got '\+x'/);
    expectInvalid(wrap('*** Add File: a\n+x\n\n+y'), 5, /an added file ends at its first line without '\+'/);
    expectInvalid(wrap('*** Add File: a\n*** End of File'), 3, /'\*\*\* End of File' must end a hunk/);
  });

  it('refuses a Move to that does not directly follow its Update', () => {
    expectInvalid(
      wrap('*** Update File: a\n\n*** Move to: b\n@@\n-a\n+b'),
      4,
      /'\*\*\* Move to:' must directly follow/,
    );
    expectInvalid(wrap('*** Update File: a\n@@\n-a\n+b\n*** Move to: b'), 6, /must directly follow/);
    expectInvalid(wrap('*** Add File: a\n*** Move to: b'), 3, /must directly follow/);
  });

  it('refuses unknown *** headers and a second End Patch', () => {
    expectInvalid(wrap('*** Frobnicate File: foo'), 2, /'\*\*\* Frobnicate File: foo' is not a valid file header/);
    expectInvalid(
      '*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n*** Add File: b\n+y\n*** End Patch',
      4,
      /must be the last line of the patch/,
    );
  });

  it('refuses an empty path after a header', () => {
    expectInvalid(wrap('*** Add File:\n+x'), 2, /expected a path after '\*\*\* Add File:'/);
    expectInvalid(wrap('*** Delete File:   '), 2, /expected a path after '\*\*\* Delete File:'/);
    expectInvalid(wrap('*** Update File: \n@@\n-a\n+b'), 2, /expected a path after '\*\*\* Update File:'/);
    expectInvalid(wrap('*** Update File: a\n*** Move to:\n@@\n-a\n+b'), 3, /expected a path after '\*\*\* Move to:'/);
  });
});

describe('parsePatch: format detection and whole-patch checks', () => {
  it('refuses text that is neither format at its first line', () => {
    expectInvalid('hello', 1, /a patch must start with '\*\*\* Begin Patch' or be a unified diff/);
    expectInvalid('', 1, /the patch is empty/);
    expectInvalid('   \n\n', 1, /the patch is empty/);
  });

  it('refuses one path named by two operations, naming both lines', () => {
    const error = refusal(wrap('*** Update File: a\n@@\n-a\n+b\n*** Update File: ./a\n@@\n-c\n+d'));
    expect(error.code).toBe('patch_invalid');
    expect(error.details).toEqual({ line: 6, firstLine: 2, path: './a' });
    expect(error.message).toMatch(/^line 6: '\.\/a' is already the subject of the operation on line 2/);
    expectInvalid(
      wrap('*** Add File: new.txt\n+x\n*** Update File: old.txt\n*** Move to: new.txt\n@@\n-a\n+b'),
      4,
      /'new.txt' is already the subject of the operation on line 2/,
    );
    expectInvalid(wrap('*** Delete File: a\n*** Add File: a\n+x'), 3, /already the subject/);
  });

  it('accepts a move onto its own path as a plain update', () => {
    expect(parsePatch(wrap('*** Update File: a\n*** Move to: a\n@@\n-a\n+b')).operations).toHaveLength(1);
  });
});

const twoFiles = `diff --git a/src/x.ts b/src/x.ts
index 1111111..2222222 100644
--- a/src/x.ts
+++ b/src/x.ts
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
@@ -10,2 +10,3 @@ function later() {
 ten
+ten and a half
 eleven
diff --git a/y.txt b/y.txt
--- a/y.txt
+++ b/y.txt
@@ -1 +1 @@
-old
+new
`;

describe('parsePatch: unified diffs', () => {
  it('parses two files with their hunks, old starts and header lines', () => {
    expect(parsePatch(twoFiles)).toEqual({
      format: 'unified',
      operations: [
        {
          kind: 'update',
          path: 'src/x.ts',
          line: 1,
          hunks: [
            {
              anchors: [],
              oldLines: ['one', 'two', 'three'],
              newLines: ['one', 'TWO', 'three'],
              endOfFile: false,
              line: 5,
              oldStart: 1,
            },
            {
              anchors: [],
              oldLines: ['ten', 'eleven'],
              newLines: ['ten', 'ten and a half', 'eleven'],
              endOfFile: false,
              line: 10,
              oldStart: 10,
            },
          ],
        },
        {
          kind: 'update',
          path: 'y.txt',
          line: 14,
          hunks: [{ anchors: [], oldLines: ['old'], newLines: ['new'], endOfFile: false, line: 17, oldStart: 1 }],
        },
      ],
    });
  });

  it('reads /dev/null as an add or a delete, and empty files by their mode lines', () => {
    const diff = [
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      'index 0000000..1111111',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1,2 @@',
      '+hello',
      '+world',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1,2 +0,0 @@',
      '-bye',
      '-now',
      'diff --git a/empty b/empty',
      'new file mode 100644',
      'index 0000000..e69de29',
      'diff --git a/was-empty b/was-empty',
      'deleted file mode 100644',
      'index e69de29..0000000',
      '',
    ].join('\n');
    expect(parsePatch(diff).operations).toEqual([
      { kind: 'add', path: 'new.txt', contents: 'hello\nworld\n', line: 1 },
      { kind: 'delete', path: 'gone.txt', line: 9 },
      { kind: 'add', path: 'empty', contents: '', line: 16 },
      { kind: 'delete', path: 'was-empty', line: 19 },
    ]);
  });

  it('reads renames, with or without hunks', () => {
    const diff = [
      'diff --git a/old/name.txt b/new/name.txt',
      'similarity index 100%',
      'rename from old/name.txt',
      'rename to new/name.txt',
      'diff --git a/a.ts b/b.ts',
      'similarity index 80%',
      'rename from a.ts',
      'rename to b.ts',
      'index 1..2 100644',
      '--- a/a.ts',
      '+++ b/b.ts',
      '@@ -1 +1 @@',
      '-x',
      '+y',
      '',
    ].join('\n');
    expect(parsePatch(diff).operations).toEqual([
      { kind: 'update', path: 'old/name.txt', moveTo: 'new/name.txt', hunks: [], line: 1 },
      {
        kind: 'update',
        path: 'a.ts',
        moveTo: 'b.ts',
        line: 5,
        hunks: [{ anchors: [], oldLines: ['x'], newLines: ['y'], endOfFile: false, line: 12, oldStart: 1 }],
      },
    ]);
  });

  it('reads \\ No newline at end of file into finalNewline and add contents', () => {
    const newSide = parsePatch('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n')
      .operations[0];
    expect(newSide).toMatchObject({ hunks: [{ oldLines: ['a', 'b'], newLines: ['a', 'c'], finalNewline: false }] });
    const oldSide = parsePatch('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n')
      .operations[0];
    expect(oldSide).toMatchObject({ hunks: [{ finalNewline: true }] });
    const both = parsePatch('--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n')
      .operations[0];
    expect(both).toMatchObject({ hunks: [{ finalNewline: false }] });
    const neither = parsePatch('--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n').operations[0];
    expect(neither).toMatchObject({ hunks: [{}] });
    expect((neither as { hunks: { finalNewline?: boolean }[] }).hunks[0]!.finalNewline).toBeUndefined();
    const add = parsePatch('--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n')
      .operations[0];
    expect(add).toEqual({ kind: 'add', path: 'f', contents: 'a\nb', line: 1 });
  });

  it('strips a/ and b/ only when the patch uses them', () => {
    expect(parsePatch('--- x.txt\n+++ x.txt\n@@ -1 +1 @@\n-a\n+b\n').operations[0]).toMatchObject({ path: 'x.txt' });
    expect(parsePatch('--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n').operations[0]).toMatchObject({
      path: 'x.txt',
    });
    expect(parsePatch('--- a/x.txt\n+++ a/x.txt\n@@ -1 +1 @@\n-a\n+b\n').operations[0]).toMatchObject({
      path: 'a/x.txt',
    });
    expect(parsePatch('--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+a\n').operations[0]).toMatchObject({
      kind: 'add',
      path: 'n.txt',
    });
    expect(parsePatch('--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n').operations[0]).toMatchObject({
      kind: 'delete',
      path: 'd.txt',
    });
  });

  it('accepts Index: headers, a heredoc wrapper and CRLF transport', () => {
    const svn =
      'Index: f.txt\n===================================================================\n--- f.txt\t(revision 1)\n+++ f.txt\t(working copy)\n@@ -1 +1 @@\n-a\n+b\n';
    expect(parsePatch(svn).operations[0]).toMatchObject({ path: 'f.txt', line: 1, hunks: [{ line: 5 }] });
    expect(parsePatch(`<<'EOF'\n${twoFiles}EOF\n`).operations[1]).toMatchObject({
      path: 'y.txt',
      line: 15,
      hunks: [{ line: 18 }],
    });
    expect(parsePatch(twoFiles.replace(/\n/g, '\r\n')).operations[1]).toMatchObject({
      hunks: [{ oldLines: ['old'], newLines: ['new'] }],
    });
  });

  it('keeps a mode-only change out of the operations', () => {
    const diff = 'diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n' + twoFiles;
    expect(parsePatch(diff).operations.map((operation) => operation.path)).toEqual(['src/x.ts', 'y.txt']);
    expectInvalid('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n', 1, /no file operations/);
  });
});

describe('parsePatch: unified refusals point at the offending line', () => {
  it('refuses binary patches and copies', () => {
    expectInvalid(
      'diff --git a/i.png b/i.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\nabcde\n',
      3,
      /binary patches are not supported/,
    );
    expectInvalid(
      'diff --git a/i.png b/i.png\nindex 1..2 100644\nBinary files a/i.png and b/i.png differ\n',
      3,
      /binary patches are not supported/,
    );
    expectInvalid('diff --git a/a b/b\nsimilarity index 100%\ncopy from a\ncopy to b\n', 3, /copies are not supported/);
  });

  it('maps jsdiff errors to the line at fault', () => {
    expectInvalid(
      '--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\nb\n+c\n',
      5,
      /expected a hunk line starting with ' ', '\+', '-' or '\\' .*got 'b'/,
    );
    expectInvalid('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n', 6, /the patch ends inside the hunk of line 3/);
    expectInvalid(
      '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-b\n+c\n+d\n',
      6,
      /the hunk of line 3 has more lines than its '@@' header counts; got '\+d'/,
    );
    expectInvalid('--- a/x\n@@ -1 +1 @@\n-b\n+c\n', 1, /expected a '\+\+\+ <path>' line to pair with '--- a\/x'/);
  });

  it('refuses hunk headers jsdiff would skip, stray lines and hunks without file headers', () => {
    expectInvalid('--- a/x\n+++ b/x\n@@\n-b\n+c\n', 3, /expected a hunk header like '@@ -12,5 \+12,6 @@'; got '@@'/);
    expectInvalid('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-b\n+c\nfoo\n', 6, /got 'foo'/);
    expectInvalid('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-b\n+c\n\n-stray\n', 7, /got '-stray'/);
    expect(parsePatch('diff --git a/x b/x\n@@ -1 +1 @@\n-b\n+c\n').operations[0]).toMatchObject({
      kind: 'update',
      path: 'x',
    });
    expectInvalid(
      'diff --git x y\n@@ -1 +1 @@\n-b\n+c\n',
      1,
      /expected '--- a\/<path>' and '\+\+\+ b\/<path>' lines naming the file/,
    );
    const error = refusal('@@ -1 +1 @@\n-b\n+c\n', parseUnifiedDiff);
    expect(error.details).toEqual({ line: 1 });
  });

  it('refuses a file diff with no hunks, or with two names and no rename', () => {
    expectInvalid('--- a/x\n+++ b/x\n', 1, /the diff of 'x' has no hunks/);
    expectInvalid(
      '--- a/x.orig\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
      1,
      /paths differ \('x.orig' and 'x'\) without 'rename from'/,
    );
  });
});

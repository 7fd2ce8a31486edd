// applyHunks: where hunks land, what the file looks like afterwards, and how a hunk that does not fit is reported.
import { describe, expect, it } from 'vitest';
import { ToolError } from '../../../src/core/errors.ts';
import { applyHunks } from '../../../src/tools/apply-patch/apply-hunks.ts';
import { parsePatch } from '../../../src/tools/apply-patch/parse-patch.ts';
import type { Hunk } from '../../../src/tools/apply-patch/patch.ts';

/** Applies the hunks of a one-file Codex update body to `original`. */
function update(original: string, body: string): Promise<string> {
  const parsed = parsePatch(`*** Begin Patch\n*** Update File: f.txt\n${body}\n*** End Patch\n`);
  const operation = parsed.operations[0]!;
  if (operation.kind !== 'update') throw new Error('expected an update');
  return applyHunks('f.txt', original, operation.hunks);
}

/** Applies a one-file unified diff to `original`. */
function unified(original: string, diff: string): Promise<string> {
  const operation = parsePatch(diff).operations[0]!;
  if (operation.kind !== 'update') throw new Error('expected an update');
  return applyHunks(operation.path, original, operation.hunks);
}

function hunk(fields: Partial<Hunk> & Pick<Hunk, 'oldLines' | 'newLines'>): Hunk {
  return { anchors: [], endOfFile: false, line: 1, ...fields };
}

async function caught(run: () => Promise<unknown>): Promise<ToolError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof ToolError) return error;
    throw error;
  }
  throw new Error('expected a ToolError');
}

describe('applyHunks: line endings and the final newline', () => {
  it('keeps a CRLF file CRLF, new lines included, and ignores a \\r the patch lines carry', async () => {
    expect(await update('a\r\nb\r\nc\r\n', '@@\n a\n-b\n+B\n+B2')).toBe('a\r\nB\r\nB2\r\nc\r\n');
    const fromGit = [hunk({ oldLines: ['a\r', 'b\r'], newLines: ['a\r', 'X\r'] })];
    expect(await applyHunks('f', 'a\r\nb\r\n', fromGit)).toBe('a\r\nX\r\n');
  });

  it('leaves a mixed file split at \\n, its \\r kept as text where nothing changed', async () => {
    expect(await update('a\r\nb\nc\n', '@@\n-b\n+B')).toBe('a\r\nB\nc\n');
  });

  it('keeps a missing final newline missing, and a present one present', async () => {
    expect(await update('a\nb', '@@\n a\n-b\n+c')).toBe('a\nc');
    expect(await update('a\nb', '@@\n+c')).toBe('a\nb\nc');
    expect(await update('a\r\nb', '@@\n-b\n+c')).toBe('a\r\nc');
    expect(await update('a\nb\n', '@@\n-b\n+c')).toBe('a\nc\n');
  });

  it('ends an empty file that gains lines with a newline, and empties a file that loses them all', async () => {
    expect(await update('', '@@\n+first\n+second')).toBe('first\nsecond\n');
    expect(await update('only\n', '@@\n-only')).toBe('');
  });

  it('lets a hunk set the final newline, as `\\ No newline at end of file` does', async () => {
    const drop = [hunk({ oldLines: ['b'], newLines: ['c'], finalNewline: false })];
    expect(await applyHunks('f', 'a\nb\n', drop)).toBe('a\nc');
    const add = [hunk({ oldLines: ['b'], newLines: ['c'], finalNewline: true })];
    expect(await applyHunks('f', 'a\nb', add)).toBe('a\nc\n');
  });

  it('returns the original untouched when there are no hunks (a pure move)', async () => {
    expect(await applyHunks('f', 'a\r\nb', [])).toBe('a\r\nb');
  });
});

describe('applyHunks: where hunks land', () => {
  it('matches with Unicode punctuation folded', async () => {
    expect(await update('say “hi” – now\nend\n', '@@\n-say "hi" - now\n+say hello')).toBe('say hello\nend\n');
  });

  it('narrows the search with an @@ anchor when the same block repeats', async () => {
    const original = 'function a() {\n  return 1;\n}\nfunction b() {\n  return 1;\n}\n';
    expect(await update(original, '@@ function b() {\n-  return 1;\n+  return 2;')).toBe(
      original.replace(/return 1;\n}\n$/, 'return 2;\n}\n'),
    );
  });

  it('narrows step by step with stacked anchors', async () => {
    const original =
      'class A:\n  def run(self):\n    x = 1\nclass B:\n  def stop(self):\n    x = 1\n  def run(self):\n    x = 1\n';
    const result = await update(original, '@@ class B:\n@@   def run(self):\n-    x = 1\n+    x = 2');
    expect(result).toBe(
      'class A:\n  def run(self):\n    x = 1\nclass B:\n  def stop(self):\n    x = 1\n  def run(self):\n    x = 2\n',
    );
  });

  it('anchors an End of File hunk at the end even when its lines also appear earlier', async () => {
    expect(await update('}\nmore\n}\n', '@@\n-}\n+};\n*** End of File')).toBe('}\nmore\n};\n');
  });

  it('applies several hunks in one file, in order', async () => {
    const original = 'a\nb\nc\nd\ne\nf\n';
    expect(await update(original, '@@\n a\n-b\n+B\n@@\n d\n-e\n+E\n@@\n f\n+g\n*** End of File')).toBe(
      'a\nB\nc\nd\nE\nf\ng\n',
    );
  });

  it('appends a pure addition without anchor at the end, before a final empty line (Codex)', async () => {
    expect(await update('a\nb\n', '@@\n+c')).toBe('a\nb\nc\n');
    expect(await update('a\n\n', '@@\n+c')).toBe('a\nc\n\n');
    expect(await update('a\nb\n', '@@\n+c\n*** End of File')).toBe('a\nb\nc\n');
  });

  it('inserts a pure addition right after its @@ anchor', async () => {
    expect(await update('class A:\n  x = 1\nclass B:\n  y = 1\n', '@@ class A:\n+  z = 0')).toBe(
      'class A:\n  z = 0\n  x = 1\nclass B:\n  y = 1\n',
    );
  });

  it('retries without a trailing empty context line, as Codex does', async () => {
    expect(await update('foo\nbar\nbaz\n', '@@\n-foo\n+FOO\n bar\n')).toBe('FOO\nbar\nbaz\n');
  });

  it('finds the context again when a model repeats the @@ line as the first context line', async () => {
    expect(await update('def f():\n    return 1\n', '@@ def f():\n def f():\n-    return 1\n+    return 2')).toBe(
      'def f():\n    return 2\n',
    );
  });

  it("believes a unified hunk's old start when the lines are there, and searches when they moved", async () => {
    const original = 'x\ny\nx\ny\n';
    expect(await unified(original, '--- a/f\n+++ b/f\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n')).toBe('x\ny\nx\nY\n');
    expect(await unified('new\nx\ny\n', '--- a/f\n+++ b/f\n@@ -5,2 +5,2 @@\n x\n-y\n+Y\n')).toBe('new\nx\nY\n');
    expect(await unified('a\nb\n', '--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+inserted\n')).toBe('a\ninserted\nb\n');
  });
});

describe('applyHunks: conflicts', () => {
  it('reports a hunk whose lines are not there with its index, patch line and expected lines', async () => {
    const error = await caught(() => update('a\nb\nc\n', '@@\n-a\n+A\n@@\n-zzz\n+y'));
    expect(error.code).toBe('patch_conflict');
    expect(error.details).toEqual({ path: 'f.txt', hunk: 2, line: 6, expected: ['zzz'] });
    expect(error.message).toBe(
      "hunk 2 of f.txt (patch line 6) does not match the file: these lines were not found in order after line 1: 'zzz'; read the file again and regenerate the hunk",
    );
  });

  it('reports an anchor that is not there', async () => {
    const error = await caught(() => update('a\nb\n', '@@ class Missing:\n-a\n+b'));
    expect(error.code).toBe('patch_conflict');
    expect(error.details).toEqual({ path: 'f.txt', hunk: 1, line: 3, expected: ['class Missing:'] });
    expect(error.message).toMatch(/the context line '@@ class Missing:' was not found from the start of the file/);
  });

  it('explains a unified-diff range written as a Codex anchor', async () => {
    const error = await caught(() => update('x\n', '@@ -1,3 +1,3 @@\n-x\n+y'));
    expect(error.message).toMatch(/not a unified-diff range/);
  });

  it('never moves back: hunks given out of order do not match', async () => {
    const error = await caught(() => update('a\nb\nc\n', '@@\n-c\n+C\n@@\n-a\n+A'));
    expect(error.details).toMatchObject({ hunk: 2, expected: ['a'] });
  });

  it('refuses an End of File hunk whose lines are not at the end', async () => {
    const error = await caught(() => update('a\nb\n', '@@\n-a\n+A\n*** End of File'));
    expect(error.message).toMatch(/not found at the end of the file/);
  });

  it('refuses two hunks that claim the same lines', async () => {
    const hunks = [
      hunk({ oldLines: ['a', 'b'], newLines: ['A', 'B'] }),
      hunk({ oldLines: ['b'], newLines: ['X'], endOfFile: true, line: 7 }),
    ];
    const error = await caught(() => applyHunks('f', 'a\nb\n', hunks));
    expect(error.code).toBe('patch_conflict');
    expect(error.details).toMatchObject({ path: 'f', hunk: 2, line: 7 });
    expect(error.message).toMatch(/overlaps hunk 1, which changes lines 1-2; merge the two hunks into one/);
  });

  it('shortens the expected lines in the message but keeps them all in details', async () => {
    const error = await caught(() => update('a\n', '@@\n-1\n-2\n-3\n-4\n-5'));
    expect(error.message).toMatch(/'1' \/ '2' \/ '3' … \(2 more\)/);
    expect(error.details?.expected).toEqual(['1', '2', '3', '4', '5']);
  });
});

describe('applyHunks: a large file', () => {
  it('applies 200 hunks to a 5,000-line file correctly (its speed is measured by npm run bench)', async () => {
    const lines = Array.from({ length: 5000 }, (_, index) => `  statement(${index % 7}); // line ${index}`);
    const expected = [...lines];
    const body: string[] = [];
    for (let index = 12; index < 5000 && body.length < 200 * 6; index += 25) {
      body.push(
        `@@ ${lines[index - 3]!.trimStart()}`,
        ` ${lines[index - 2]}`,
        ` ${lines[index - 1]}`,
        `-${lines[index]}`,
        `+  changed(${index});`,
        ` ${lines[index + 1]}`,
      );
      expected[index] = `  changed(${index});`;
    }
    const parsed = parsePatch(`*** Begin Patch\n*** Update File: big.ts\n${body.join('\n')}\n*** End Patch`);
    const operation = parsed.operations[0]!;
    if (operation.kind !== 'update') throw new Error('expected an update');
    expect(operation.hunks).toHaveLength(200);
    const original = `${lines.join('\n')}\n`;
    const result = await applyHunks('big.ts', original, operation.hunks);
    expect(result).toBe(`${expected.join('\n')}\n`);
  });
});

// The console's browser modules that hold logic of their own, run in Node: the SSE reader and the
// apply_patch preview.
import { describe, expect, it } from 'vitest';
import { previewPatch, previewWrite } from '../../../src/http/console/app/change-preview.ts';
import { readEvents, type StreamEvent } from '../../../src/http/console/app/sse.ts';
import { plainText } from '../../../src/http/console/app/terminal-text.ts';

/** A body delivering `chunks` one by one, as a network might split it. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function events(chunks: string[]): Promise<StreamEvent[]> {
  const seen: StreamEvent[] = [];
  await readEvents(body(chunks), (event) => seen.push(event));
  return seen;
}

describe('readEvents', () => {
  it('parses events, ids, multi-line data and comments, however the chunks split them', async () => {
    const text =
      ': keep-alive\n\nevent: output\nid: 5\ndata: {"data":"hello","offset":0}\n\n' +
      'event: approval\r\ndata: line one\r\ndata: line two\r\n\r\ndata: plain\n\n';
    const expected: StreamEvent[] = [
      { event: 'output', id: '5', data: '{"data":"hello","offset":0}' },
      { event: 'approval', id: '5', data: 'line one\nline two' },
      { event: 'message', id: '5', data: 'plain' },
    ];
    expect(await events([text])).toEqual(expected);
    // Every split point, a CRLF cut in two included.
    for (let at = 1; at < text.length; at += 1)
      expect(await events([text.slice(0, at), text.slice(at)])).toEqual(expected);
    // And a multi-byte character cut between chunks.
    const bytes = new TextEncoder().encode('data: é\n\n');
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, 7));
        controller.enqueue(bytes.slice(7));
        controller.close();
      },
    });
    const seen: StreamEvent[] = [];
    await readEvents(split, (event) => seen.push(event));
    expect(seen).toEqual([{ event: 'message', data: 'é' }]);
  });
});

describe('previewPatch', () => {
  const files: Record<string, string> = { 'src/a.txt': 'one\ntwo\nthree\n', 'old.txt': 'bye\n' };
  const read = async (path: string) => files[path];

  it('shows each file of the patch as the tool would change it now', async () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: src/a.txt',
      '@@',
      ' one',
      '-two',
      '+TWO',
      '*** Add File: new.txt',
      '+fresh',
      '*** Delete File: old.txt',
      '*** End Patch',
    ].join('\n');
    expect(await previewPatch(patch, read)).toEqual([
      {
        path: 'src/a.txt',
        action: 'update',
        diff: '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n',
      },
      { path: 'new.txt', action: 'add', diff: '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+fresh\n' },
      { path: 'old.txt', action: 'delete', diff: '--- a/old.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n' },
    ]);
  });

  it('names what would fail: a hunk that no longer matches, a file that is gone, a patch that does not parse', async () => {
    const stale = await previewPatch(
      '*** Begin Patch\n*** Update File: src/a.txt\n@@\n-four\n+FOUR\n*** Update File: gone.txt\n@@\n-x\n+y\n*** End Patch\n',
      read,
    );
    expect(stale[0]).toMatchObject({ path: 'src/a.txt', action: 'update' });
    expect(stale[0]!.problem).toMatch(/four/);
    expect(stale[1]).toEqual({
      path: 'gone.txt',
      action: 'update',
      problem: 'gone.txt does not exist now, so the patch would fail.',
    });
    await expect(previewPatch('not a patch', read)).rejects.toThrow();
  });
});

describe('plainText', () => {
  it("drops a terminal's colours, cursor moves and titles, and the \\r of \\r\\n, keeping the text", () => {
    expect(plainText('\x1b[1;32mok\x1b[0m done\r\n\x1b]0;title\x07next\x1b[2K\x1b[1Gline\r\n')).toBe(
      'ok done\nnextline\n',
    );
    expect(plainText('plain\ntext')).toBe('plain\ntext');
  });
});

describe('previewWrite', () => {
  const read = async (path: string) => (path === 'src/a.txt' ? 'one\n' : undefined);

  it('diffs a write against the file now: overwrite, append, a new file, and create over an existing one', async () => {
    expect(await previewWrite({ path: 'src/a.txt', content: 'two\n' }, read)).toEqual([
      { path: 'src/a.txt', action: 'update', diff: '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n' },
    ]);
    expect(await previewWrite({ path: 'src/a.txt', content: 'two\n', mode: 'append' }, read)).toEqual([
      { path: 'src/a.txt', action: 'update', diff: '--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,1 +1,2 @@\n one\n+two\n' },
    ]);
    expect(await previewWrite({ path: 'new.txt', content: 'x\n', mode: 'create' }, read)).toEqual([
      { path: 'new.txt', action: 'add', diff: '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,1 @@\n+x\n' },
    ]);
    expect(await previewWrite({ path: 'src/a.txt', content: 'x', mode: 'create' }, read)).toEqual([
      { path: 'src/a.txt', action: 'update', problem: 'src/a.txt exists now, so mode create would fail.' },
    ]);
  });
});

// WorkspaceHistory on real drivers (SQLite, the memory object store): checkpoints are real git commits,
// readable by isomorphic-git through the store fs and, exported as files, by the git CLI (fsck, log).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { log, readCommit } from 'isomorphic-git';
import { afterAll, describe, expect, it } from 'vitest';
import { openGitDirectory } from '../../src/history/git-directory.ts';
import { WorkspaceHistory } from '../../src/history/workspace-history.ts';
import { MemoryObjectStore } from '../../src/storage/memory-object-store.ts';
import { SqliteDatabase } from '../../src/storage/node/sqlite-database.ts';
import type { Workspace } from '../../src/workspace/workspace.ts';
import { Workspaces } from '../../src/workspace/workspaces.ts';

const db = SqliteDatabase.memory();
const objects = new MemoryObjectStore();
const workspaces = new Workspaces(db, objects);
const limits = { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20, timeoutMs: 10_000 };
const history = new WorkspaceHistory(db, objects, { limits }).attach(workspaces);
const scratch = mkdtempSync(join(tmpdir(), 'toolgate-history-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const text = (value: string) => new TextEncoder().encode(value);

function open(id: string): Workspace {
  workspaces.create(id);
  return workspaces.open(id);
}

/** Copies the git directory out of the store as plain files, so the git CLI can read it. */
async function exportGitDir(workspace: Workspace, to: string): Promise<void> {
  const dir = openGitDirectory(db, objects, workspace);
  const listed = await objects.list(`ws/${workspace.uid}/git/`, { limit: 100_000 });
  for (const object of listed.objects) {
    const path = join(to, object.key.slice(`ws/${workspace.uid}/git/`.length));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, (await objects.get(object.key))!.body);
  }
  for (const row of db.query<{ path: string; content: Uint8Array }>(
    'SELECT path, content FROM git_files WHERE workspace = ?',
    workspace.uid,
  )) {
    mkdirSync(dirname(join(to, row.path)), { recursive: true });
    writeFileSync(join(to, row.path), row.content);
  }
  mkdirSync(join(to, 'refs/tags'), { recursive: true });
  expect(dir.gitdir).toBe('/git');
}

describe('WorkspaceHistory', () => {
  it('checkpoints as git commits with parent links, newest first in the list, valid for git fsck', async () => {
    const workspace = open('commits');
    await workspace.commit([
      { op: 'write', path: 'a.txt', content: text('one\n') },
      { op: 'write', path: 'src/b.txt', content: text('two\n') },
      { op: 'symlink', path: 'link', target: 'src/b.txt' },
      { op: 'mkdir', path: 'empty' },
    ]);
    const first = await history.checkpoint(workspace, 'first');
    await workspace.commit([{ op: 'write', path: 'a.txt', content: text('one more\n') }]);
    const second = await history.checkpoint(workspace);
    expect(history.list(workspace).map((row) => [row.id, row.message])).toEqual([
      [second.id, 'checkpoint'],
      [first.id, 'first'],
    ]);

    const dir = openGitDirectory(db, objects, workspace);
    const commits = await log({ fs: dir.fs, gitdir: dir.gitdir, ref: 'main' });
    expect(commits.map((entry) => entry.oid)).toEqual([second.id, first.id]);
    expect((await readCommit({ fs: dir.fs, gitdir: dir.gitdir, oid: second.id })).commit.parent).toEqual([first.id]);

    const exported = join(scratch, 'commits.git');
    await exportGitDir(workspace, exported);
    execFileSync('git', ['--git-dir', exported, 'fsck', '--full', '--strict'], { stdio: 'pipe' });
    expect(execFileSync('git', ['--git-dir', exported, 'log', '--format=%H %s'], { encoding: 'utf8' })).toBe(
      `${second.id} checkpoint\n${first.id} first\n`,
    );
    expect(execFileSync('git', ['--git-dir', exported, 'ls-tree', '-r', first.id], { encoding: 'utf8' })).toMatch(
      /^100644 blob \w+\ta\.txt\n120000 blob \w+\tlink\n100644 blob \w+\tsrc\/b\.txt\n$/,
    );
    expect(execFileSync('git', ['--git-dir', exported, 'show', `${first.id}:link`], { encoding: 'utf8' })).toBe(
      'src/b.txt',
    );
  });

  it('hashes each content once: a second checkpoint of unchanged files writes no blob object', async () => {
    const workspace = open('hash-once');
    await workspace.commit([{ op: 'write', path: 'big.txt', content: text('x'.repeat(1000)) }]);
    await history.checkpoint(workspace);
    const count = async () =>
      (await objects.list(`ws/${workspace.uid}/git/objects/`, { limit: 100_000 })).objects.length;
    const before = await count();
    await history.checkpoint(workspace);
    // Only the new commit object: the blob and the tree are the same objects.
    expect(await count()).toBe(before + 1);
  });

  it('restores a checkpoint in one commit, empty directories gone, and diffs to now', async () => {
    const workspace = open('restore');
    await workspace.commit([
      { op: 'write', path: 'keep.txt', content: text('same\n') },
      { op: 'write', path: 'dir/file', content: text('file\n') },
      { op: 'symlink', path: 'ln', target: 'keep.txt' },
    ]);
    const saved = await history.checkpoint(workspace);
    await workspace.commit([
      { op: 'delete', path: 'dir/file' },
      { op: 'delete', path: 'dir' },
      { op: 'write', path: 'dir', content: text('now a file\n') },
      { op: 'symlink', path: 'ln', target: 'dir' },
      { op: 'mkdir', path: 'newdir/deeper' },
    ]);
    expect(await history.diff(workspace, saved.id)).toBe(
      [
        'diff --git a/dir b/dir',
        'new file mode 100644',
        '--- /dev/null',
        '+++ b/dir',
        '@@ -0,0 +1,1 @@',
        '+now a file',
        'diff --git a/dir/file b/dir/file',
        'deleted file mode 100644',
        '--- a/dir/file',
        '+++ /dev/null',
        '@@ -1,1 +0,0 @@',
        '-file',
        'diff --git a/ln b/ln',
        '--- a/ln',
        '+++ b/ln',
        '@@ -1,1 +1,1 @@',
        '-keep.txt',
        '\\ No newline at end of file',
        '+dir',
        '\\ No newline at end of file',
        '',
      ].join('\n'),
    );
    const restored = await history.restore(workspace, saved.id);
    expect(restored.version).toBeGreaterThan(0);
    expect(workspace.manifestEntries().map((entry) => [entry.path, entry.type, entry.target])).toEqual([
      ['dir', 'dir', null],
      ['dir/file', 'file', null],
      ['keep.txt', 'file', null],
      ['ln', 'symlink', 'keep.txt'],
    ]);
    expect(await history.diff(workspace, saved.id)).toBe('');
    expect(await history.restore(workspace, saved.id)).toEqual({ restored: saved.id, version: null });
  });

  it('refuses malformed and unknown ids, and forgets the history of a deleted workspace', async () => {
    const workspace = open('ids');
    await expect(history.diff(workspace, 'nope')).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(history.restore(workspace, 'a'.repeat(40))).rejects.toMatchObject({ code: 'not_found' });
    const made = await history.checkpoint(workspace);
    await workspaces.delete('ids');
    const again = open('ids');
    expect(history.list(again)).toEqual([]);
    await expect(history.diff(again, made.id)).rejects.toMatchObject({ code: 'not_found' });
    expect(db.query('SELECT * FROM git_files WHERE workspace = ?', workspace.uid)).toEqual([]);
  });
});

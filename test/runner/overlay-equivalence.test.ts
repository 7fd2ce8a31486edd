// An exec over an overlay finds exactly the changes, and leaves exactly the workspace copy, that a full scan of a bound copy does.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  lstatSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobFiles } from '../../src/runner/node/blob-files.ts';
import { createLayers, detectOverlay, removeLayers } from '../../src/runner/node/overlay.ts';
import { describeIsolation } from '../../src/runner/node/sandbox.ts';
import { sha256 } from '../../src/runner/node/blob-files.ts';
import type { MirrorEntry, ScanResult } from '../../src/runner/node/mirror-changes.ts';
import { WorkspaceMirror } from '../../src/runner/node/workspace-mirror.ts';
import { bwrapSkipReason, run } from './sandbox-fixtures.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-overlay-'));
  dirs.push(dir);
  return dir;
}

// Where bubblewrap and getfattr are installed, the overlay must work: a failed probe fails here rather than skipping.
const skipReason =
  bwrapSkipReason ?? (existsSync('/usr/bin/getfattr') ? undefined : 'getfattr is not installed (the attr package)');
const probe = skipReason === undefined ? detectOverlay() : undefined;

const START: Record<string, string> = {
  'src/a.txt': 'alpha\n',
  'src/b.txt': 'bravo\n',
  'src/nested/deep/c.txt': 'charlie\n',
  'docs/readme.md': '# readme\n',
  'docs/guide/intro.md': 'intro\n',
  'tree/x/1': 'one\n',
  'tree/x/2': 'two\n',
  'tree/y/3': 'three\n',
  'with space/file name.txt': 'spaced\n',
  'ünï/ñ.txt': 'unicode\n',
};

/** Commands run one exec after another, each on what the previous ones left. */
const STEPS = [
  // Create files and a nested new tree.
  'echo new > created.txt && mkdir -p fresh/deeper/deepest && echo leaf > fresh/deeper/deepest/leaf.txt && printf x > fresh/one',
  // Modify in place, truncate, append; touch changes nothing that is kept.
  "sed -i s/alpha/ALPHA/ src/a.txt && : > src/b.txt && echo more >> docs/readme.md && touch 'with space/file name.txt'",
  // Delete a file and a directory tree.
  'rm src/b.txt && rm -r tree/y',
  // Remove a directory and make it again under the same name.
  'rm -r docs && mkdir docs && echo back > docs/readme.md',
  // Rename a file, a directory in place, and a directory into another parent.
  'mv src/a.txt src/renamed.txt && mv tree moved-tree && mv src/nested nested-out',
  // Create and replace symlinks, one pointing out of the workspace.
  'ln -s src/renamed.txt link && ln -s docs link2 && ln -sfn fresh link2 && ln -s /etc/passwd outside && mkdir links && ln -s ../src/renamed.txt links/up && ln -s /workspace/docs links/absolute',
  // Permission changes only.
  'chmod 600 src/renamed.txt && chmod 700 fresh/deeper',
  // A file becomes a directory, and a directory a file.
  'rm created.txt && mkdir created.txt && echo in > created.txt/inner && rm -r fresh && echo now-a-file > fresh',
  // Names with spaces and unicode, in new and in existing directories.
  "mkdir -p 'sp ace/ü' && echo 1 > 'sp ace/ü/名前.txt' && mkdir 'ünï/sub dir' && echo 2 > 'ünï/sub dir/ø.txt' && mv 'with space' 'with  spaces'",
  // Fails half way: what it did before failing is kept.
  'echo partial > partial.txt && mkdir -p half/done && false && echo never > never.txt',
  // Rename directories made by earlier commands, then change what is inside them.
  "mv moved-tree/x moved-tree/x2 && echo changed > moved-tree/x2/1 && mv nested-out/deep nested-out/deep2 && rm nested-out/deep2/c.txt && rm -r 'sp ace' && mkdir 'sp ace'",
  // Swap two directories through a third.
  'mkdir swap && mv docs swap/docs && mv src docs && mv swap/docs src && rmdir swap',
  // Replace a directory by one with other permissions that holds a directory renamed into it.
  'rm -r created.txt && mkdir -m 711 created.txt && mv half created.txt/half',
  // Rename a directory onto one just removed, then rename inside the renamed one.
  'rm -r moved-tree && mv nested-out moved-tree && mkdir moved-tree/deep2/sub && echo s > moved-tree/deep2/sub/s && mv moved-tree/deep2 deep3',
  // A hard link, and a file made and removed again (nothing net).
  'ln fresh hardlink && echo temp > temp && rm temp',
  // Names that can never be workspace paths (a newline, non-NFC) and a fifo: reported as skipped, left on disk.
  'mkdir "$(printf \'bad\\ndir\')" && echo x > "$(printf \'bad\\ndir\')/in" && touch "$(printf \'cafe\\314\\201\')" && mkfifo pipe',
  // Rename the directory whose name could not be kept, and remove the rest.
  'mv "$(printf \'bad\\ndir\')" good-dir && rm "$(printf \'cafe\\314\\201\')" pipe',
  // Nearly everything goes.
  'rm -rf -- * && echo last > only.txt && mkdir -p a/b/c && ln -s a/b a-link',
];

/** The directory as a user would compare it: types, contents, link targets and permission bits. */
function snapshot(root: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const name of readdirSync(join(root, relative)).sort()) {
      const path = relative === '' ? name : `${relative}/${name}`;
      const stat = lstatSync(join(root, path));
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isDirectory()) {
        found[path] = `dir ${mode}`;
        walk(path);
      } else if (stat.isSymbolicLink()) found[path] = `link ${readlinkSync(join(root, path))}`;
      else if (stat.isFile()) found[path] = `file ${mode} ${readFileSync(join(root, path), 'utf8')}`;
      else found[path] = `other ${mode}`;
    }
  };
  walk('');
  return found;
}

function manifest(files: Record<string, string>) {
  const blobs = new Map<string, Uint8Array>();
  const entries: MirrorEntry[] = [];
  const made = new Set<string>();
  for (const [path, content] of Object.entries(files)) {
    const parts = path.split('/');
    for (let index = 1; index < parts.length; index += 1) {
      const dir = parts.slice(0, index).join('/');
      if (!made.has(dir)) entries.push({ path: dir, type: 'dir', blob: null, target: null, version: 1 });
      made.add(dir);
    }
    const bytes = new TextEncoder().encode(content);
    blobs.set(sha256(bytes), bytes);
    entries.push({ path, type: 'file', blob: sha256(bytes), target: null, version: 1 });
  }
  return { entries, fetchBlob: async (hash: string) => blobs.get(hash)! };
}

/** Accepts every change as the server would on a clean commit, each at a version of its own. */
async function commit(mirror: WorkspaceMirror, result: ScanResult, step: number): Promise<void> {
  const entries: MirrorEntry[] = [];
  for (const [index, change] of result.changes.entries()) {
    const version = (step + 2) * 1000 + index;
    if (change.op === 'write')
      entries.push({ path: change.path, type: 'file', blob: sha256(change.content), target: null, version });
    if (change.op === 'symlink')
      entries.push({ path: change.path, type: 'symlink', blob: null, target: change.target, version });
    if (change.op === 'mkdir') entries.push({ path: change.path, type: 'dir', blob: null, target: null, version });
  }
  mirror.forget(result.changes.map((change) => change.path));
  await mirror.accept(entries);
  // As the runner does: the copy is exact again only when nothing on disk went unsynced.
  mirror.exact = result.skipped.length === 0;
}

async function newMirror(): Promise<WorkspaceMirror> {
  const mirror = new WorkspaceMirror(join(tempDir(), 'ws'), new BlobFiles(tempDir()));
  const { entries, fetchBlob } = manifest(START);
  await mirror.materialise(entries, fetchBlob);
  mirror.exact = true;
  return mirror;
}

async function execOver(mirror: WorkspaceMirror, command: string, overlay: boolean) {
  if (!overlay) {
    const exit = await run(command, { isolation: 'bwrap', workspaceDir: mirror.root });
    return { exit: exit.exitCode, stderr: exit.stderr, result: await mirror.scan() };
  }
  const support = probe!.support!;
  const layers = (await createLayers(tempDir(), mirror.root))!;
  try {
    const exit = await run(command, { isolation: 'bwrap', workspaceDir: mirror.root, overlay: { support, layers } });
    return { exit: exit.exitCode, stderr: exit.stderr, result: await mirror.takeUpper(support, layers) };
  } finally {
    await removeLayers(layers);
  }
}

const readable = (result: ScanResult) => ({
  changes: result.changes.map((change) =>
    change.op === 'write' ? { ...change, content: new TextDecoder().decode(change.content) } : change,
  ),
  skipped: result.skipped,
});

describe('exec over an overlay', () => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('can be mounted on this host', () => {
    expect(probe?.reason).toBeUndefined();
  });

  it('finds the same changes and leaves the same copy as a full scan, command after command', async () => {
    const scanned = await newMirror();
    const overlaid = await newMirror();
    expect(snapshot(overlaid.root)).toEqual(snapshot(scanned.root));
    let fromLayer = 0;
    let before = snapshot(scanned.root);
    for (const [step, command] of STEPS.entries()) {
      if (overlaid.exact) fromLayer += 1;
      const byScan = await execOver(scanned, command, false);
      const byOverlay = await execOver(overlaid, command, true);
      expect({ step, exit: byOverlay.exit, stderr: byOverlay.stderr }).toEqual({
        step,
        exit: byScan.exit,
        stderr: byScan.stderr,
      });
      expect({ step, ...readable(byOverlay.result) }).toEqual({ step, ...readable(byScan.result) });
      expect(snapshot(overlaid.root), command).toEqual(snapshot(scanned.root));
      // Every step changes the copy, so none passes by both sides doing nothing.
      expect(snapshot(scanned.root), command).not.toEqual(before);
      before = snapshot(scanned.root);
      await commit(scanned, byScan.result, step);
      await commit(overlaid, byOverlay.result, step);
    }
    // All but the step after the unkeepable names read the upper layer alone.
    expect(fromLayer).toBe(STEPS.length - 1);
    // What the overlaid copy now records is what is on disk: a full scan finds nothing left over.
    expect((await overlaid.scan()).changes).toEqual([]);
  });

  it('reads only what the command changed: a file put into an exact copy behind its back is not taken for one of its changes', async () => {
    const mirror = await newMirror();
    writeFileSync(join(mirror.root, 'planted.txt'), 'not the command\n');
    const { result } = await execOver(mirror, 'echo made > made.txt && rm src/a.txt', true);
    expect(readable(result).changes).toEqual([
      { op: 'write', path: 'made.txt', content: 'made\n', baseVersion: null },
      { op: 'delete', path: 'src/a.txt', baseVersion: 1 },
    ]);
    // Once the copy is no longer known to be exact, the full scan finds it too.
    mirror.exact = false;
    const later = await execOver(mirror, 'true', true);
    expect(later.result.changes.map((change) => change.path)).toContain('planted.txt');
  });

  it('renames a directory of the copy with rename(2) itself, not only through mv falling back to a copy', async (context) => {
    context.skip(!existsSync('/usr/bin/perl'), 'perl is not installed');
    const mirror = await newMirror();
    const { exit, stderr, result } = await execOver(
      mirror,
      `perl -e 'rename("tree", "renamed") or die "rename: $!\\n"'`,
      true,
    );
    if (!probe!.support!.renamesDirectories) {
      expect(stderr).toContain('Invalid cross-device link');
      return;
    }
    expect({ exit, stderr }).toEqual({ exit: 0, stderr: '' });
    expect(readable(result).changes.map((change) => `${change.op} ${change.path}`)).toEqual([
      'mkdir renamed',
      'mkdir renamed/x',
      'write renamed/x/1',
      'write renamed/x/2',
      'mkdir renamed/y',
      'write renamed/y/3',
      'delete tree/y/3',
      'delete tree/y',
      'delete tree/x/2',
      'delete tree/x/1',
      'delete tree/x',
      'delete tree',
    ]);
    expect(snapshot(mirror.root)['renamed/x/1']).toBe('file 644 one\n');
  });

  it('is named in the start-up line', () => {
    expect(describeIsolation('bwrap')).toContain('tracked by an overlay');
  });
});

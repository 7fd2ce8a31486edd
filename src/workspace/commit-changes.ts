// What each change of a manifest commit does to the entries: its precondition checked, a file's
// count and bytes kept, implied parent directories made, and every path it touched remembered.
import { ToolError } from '../core/errors.ts';
import type { EntryType } from '../core/path-guard.ts';
import { parentPath } from '../core/virtual-path.ts';
import type { CommitRows } from './commit-rows.ts';
import type { ManifestEntry } from './manifest-entry.ts';

/** What a change requires of the entry it replaces: a given version, or no entry at all. */
export type Precondition = { version: number } | { absent: true };

export type ManifestChange =
  | { op: 'write'; path: string; blob: string; size: number; expect?: Precondition }
  | { op: 'symlink'; path: string; target: string; expect?: Precondition }
  | { op: 'mkdir'; path: string }
  | { op: 'delete'; path: string; expect?: Precondition };

/** The changes of the commit running now, applied to its rows. */
export class CommitChanges {
  /** Every path written, including implied parents. */
  readonly touched = new Set<string>();
  /**
   * Directories known to be in the entries table during the commit running now: a commit of
   * many files in few directories then reads each directory once, not once per file.
   */
  private readonly directoriesNow = new Set<string>();

  clear(): void {
    this.touched.clear();
    this.directoriesNow.clear();
  }

  /** Applies one change to the commit's rows and to `stats`; a change it may not make throws. */
  apply(
    change: ManifestChange,
    current: ManifestEntry | undefined,
    stats: { version: number; files: number; bytes: number },
    rows: CommitRows,
  ): void {
    if (change.path === '')
      throw new ToolError('is_directory', 'The workspace root is a directory; name a file inside it.', { path: '' });
    if (change.op !== 'mkdir') checkPrecondition(change.path, current, change.expect);
    if (change.op === 'mkdir') {
      if (current?.type === 'dir') return;
      if (current) throw notADirectory(change.path, change.path);
      this.ensureParents(change.path, stats.version, rows);
      this.put(rows, change.path, 'dir', null, null, 0, stats.version);
      return;
    }
    if (current?.type === 'dir' && change.op !== 'delete') {
      throw new ToolError('is_directory', `${change.path} is a directory; name a file instead.`, { path: change.path });
    }
    if (current?.type === 'file') {
      stats.files -= 1;
      stats.bytes -= current.size;
    }
    if (change.op === 'delete') {
      if (!current) throw new ToolError('not_found', `${change.path} does not exist.`, { path: change.path });
      if (current.type === 'dir' && rows.hasChildren(change.path)) {
        throw new ToolError(
          'is_directory',
          `${change.path} is a directory that is not empty; delete its contents first.`,
          { path: change.path },
        );
      }
      this.touched.add(change.path);
      this.directoriesNow.delete(change.path);
      rows.delete(change.path);
      return;
    }
    if (!current) this.ensureParents(change.path, stats.version, rows);
    if (change.op === 'write') {
      stats.files += 1;
      stats.bytes += change.size;
      this.put(rows, change.path, 'file', change.blob, null, change.size, stats.version);
    } else {
      this.put(rows, change.path, 'symlink', null, change.target, 0, stats.version);
    }
  }

  /** Creates the missing ancestors of `path` as directories; an ancestor that is not one is an error. */
  private ensureParents(path: string, version: number, rows: CommitRows): void {
    const missing: string[] = [];
    for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) {
      if (this.directoriesNow.has(parent)) break;
      const entry = rows.read(parent);
      if (entry?.type === 'dir') {
        this.directoriesNow.add(parent);
        break;
      }
      if (entry) throw notADirectory(parent, path);
      missing.push(parent);
    }
    for (const dir of missing.reverse()) this.put(rows, dir, 'dir', null, null, 0, version);
  }

  private put(
    rows: CommitRows,
    path: string,
    type: EntryType,
    blob: string | null,
    target: string | null,
    size: number,
    version: number,
  ): void {
    this.touched.add(path);
    if (type === 'dir') this.directoriesNow.add(path);
    rows.write(path, type, blob, target, size, version);
  }
}

function checkPrecondition(path: string, current: ManifestEntry | undefined, expect: Precondition | undefined): void {
  if (!expect) return;
  if ('absent' in expect) {
    if (current) throw new ToolError('already_exists', `${path} already exists.`, { path });
    return;
  }
  if (!current || current.version !== expect.version) {
    throw new ToolError('conflict', `${path} changed since the version you expected; read it again and retry.`, {
      path,
    });
  }
}

function notADirectory(blocking: string, path: string): ToolError {
  return new ToolError(
    'invalid_argument',
    `${blocking} is not a directory, so ${path} cannot be created under it; choose another path or delete ${blocking} first.`,
    { path, blockingPath: blocking },
  );
}

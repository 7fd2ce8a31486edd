// The edge engine's copy of a workspace for one command: its entries in the edge's own filesystem
// (edge-fs.ts) under /workspace, where a runner's sandbox mounts it, with file contents read from
// the store only when a command reads them; the filesystem starts from the state's tree
// (edge-snapshot.ts), which other commands may share, and copies what the command changes. After
// the command, what changed is read back as a runner's copy reports it
// (contract/runner-protocol.ts RunnerChange), for the same conditional sync through the guard.
import type { RunnerChange } from '../../contract/runner-protocol.ts';
import { sha256Hex } from '../../core/content-hash.ts';
import { manifestLinkTarget } from '../../core/link-target.ts';
import type { ManifestEntry } from '../../workspace/manifest.ts';
import { EdgeFs, type EdgeReader } from './edge-fs.ts';
import { EDGE_WORKSPACE, EdgeSnapshot } from './edge-snapshot.ts';

export { EDGE_WORKSPACE } from './edge-snapshot.ts';

/** A workspace as the copy is made of it: its entries, and a file's bytes when a command first reads them. */
export interface EdgeSource extends EdgeReader {
  entries: readonly ManifestEntry[];
  /**
   * Whose blobs the files' contents are (the workspace's store, which its forks share): an edge
   * thread keeps contents it was sent for the next command of the same scope, and no other.
   */
  scope?: string;
  /** Names the state `entries` are of (the manifest's stamp): a thread that kept them under it is not sent them again. */
  listing?: string;
  /** The state's tree made already (a thread keeps it between the state's commands): `entries` are not read then. */
  snapshot?: EdgeSnapshot;
}

/** A segment of the paths a command changed; `all`: the path ending here was named, so all below it counts. */
interface TouchedNode {
  all: boolean;
  children: Map<string, TouchedNode>;
}

export class EdgeCopy {
  /** Paths (virtual) a command changed, as a tree of segments: only these, what lies below and what lies above them are compared with the manifest. */
  private readonly touched: TouchedNode = { all: false, children: new Map() };
  /** Whether anything under the workspace changed at all: when not, there is nothing to compare. */
  private changed = false;
  /** The manifest's entries when the state was listed, by path. */
  private readonly known: ReadonlyMap<string, ManifestEntry>;
  /** Links the copy does not hold: their targets leave the workspace (a runner's copy leaves them out too). */
  private readonly unwritten: ReadonlySet<string>;
  /** The filesystem the interpreter is given. */
  readonly fs: EdgeFs;

  private constructor(snapshot: EdgeSnapshot, reader: EdgeReader, maxBytes: number | undefined) {
    this.known = snapshot.known;
    this.unwritten = snapshot.unwritten;
    this.fs = new EdgeFs({
      maxTotalBytes: maxBytes,
      onChange: (path) => this.noteAbsolute(path),
      reader,
      base: snapshot.tree,
    });
  }

  /**
   * A new filesystem of at most `maxBytes` file bytes over the workspace's state (the source's
   * snapshot, or one made of its entries beside the interpreter's own files, `layout`,
   * edge-layout.ts), contents on first read.
   */
  static async of(source: EdgeSource, maxBytes?: number, layout?: EdgeFs): Promise<EdgeCopy> {
    const snapshot = source.snapshot ?? (await EdgeSnapshot.of(source.entries, { layout, scope: source.scope }));
    return new EdgeCopy(snapshot, source, maxBytes);
  }

  /**
   * What the command changed, as a runner's copy reports it (parents before children, deletes
   * last), and what no disk could hold, with why.
   */
  async changes(): Promise<{ changes: RunnerChange[]; skipped: { path: string; reason: string }[] }> {
    const changes: RunnerChange[] = [];
    const skipped: { path: string; reason: string }[] = [];
    if (!this.changed) return { changes, skipped };
    const seen = new Set<string>();
    const entries = [...this.fs.entriesBelow(EDGE_WORKSPACE)].sort((a, b) => (a.path < b.path ? -1 : 1));
    for (const { path, hardLinked } of entries) {
      seen.add(path);
      // Nothing else can have changed: every change names its path (edge-fs.ts onChange), and a
      // directory above a path it names may have been made on the way (mkdir -p). A file with two
      // names (ln) is the exception: a change through one name names only that one.
      if (!hardLinked && !this.isExamined(path)) continue;
      const known = this.known.get(path);
      const baseVersion = known?.version ?? null;
      const at = `${EDGE_WORKSPACE}/${path}`;
      if (depthOf(path) > MAX_EDGE_DEPTH) {
        skipped.push({
          path,
          reason: `deeper than the edge engine keeps (${MAX_EDGE_DEPTH} names); run it with engine "runner"`,
        });
        continue;
      }
      const stat = await this.fs.lstat(at);
      if (stat.isSymbolicLink) {
        const target = manifestLinkTarget(path, await this.fs.readlink(at), [EDGE_WORKSPACE]);
        if (known?.type !== 'symlink' || known.target !== target)
          changes.push({ op: 'symlink', path, target, baseVersion });
      } else if (stat.isDirectory) {
        if (known?.type !== 'dir') changes.push({ op: 'mkdir', path });
      } else {
        const content = await this.fs.readFileBuffer(at);
        if (known?.type === 'file' && known.blob === (await sha256Hex(content))) continue;
        changes.push({ op: 'write', path, content, baseVersion });
      }
    }
    const gone = [...this.known.values()]
      .filter((entry) => !seen.has(entry.path) && !this.unwritten.has(entry.path) && entry.path !== '')
      .sort((a, b) => (a.path < b.path ? 1 : -1));
    for (const entry of gone) changes.push({ op: 'delete', path: entry.path, baseVersion: entry.version });
    return { changes, skipped };
  }

  /** Whether a changing call named the path, a directory above it, or a path below it. */
  private isExamined(path: string): boolean {
    let node = this.touched;
    if (node.all || path === '') return true;
    for (let start = 0; ;) {
      const end = path.indexOf('/', start);
      const next = node.children.get(end < 0 ? path.slice(start) : path.slice(start, end));
      if (next === undefined) return false;
      if (next.all || end < 0) return true;
      node = next;
      start = end + 1;
    }
  }

  private noteAbsolute(absolute: string): void {
    // A change above the workspace (rm -rf /, mv of the root's names) may have changed all of it.
    if (absolute === '/' || EDGE_WORKSPACE.startsWith(`${absolute}/`)) absolute = EDGE_WORKSPACE;
    if (absolute !== EDGE_WORKSPACE && !absolute.startsWith(`${EDGE_WORKSPACE}/`)) return;
    this.changed = true;
    let node = this.touched;
    if (absolute !== EDGE_WORKSPACE)
      for (const segment of absolute.slice(EDGE_WORKSPACE.length + 1).split('/')) {
        let child = node.children.get(segment);
        if (child === undefined) {
          child = { all: false, children: new Map() };
          node.children.set(segment, child);
        }
        node = child;
      }
    node.all = true;
  }
}

/**
 * The deepest path (in names) whose changes the edge engine keeps: each look-up of a path costs
 * time in its depth, and the interpreter's commands look up every path below one they walk, so a
 * path thousands deep would take minutes. A runner keeps any depth the guard allows.
 */
export const MAX_EDGE_DEPTH = 256;

function depthOf(path: string): number {
  let depth = 1;
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) depth += 1;
  return depth;
}

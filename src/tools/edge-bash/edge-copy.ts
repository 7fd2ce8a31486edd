// The edge engine's copy of a workspace: its entries in just-bash's in-memory filesystem under
// /workspace, where a runner's sandbox mounts it, with file contents read from the store only when
// a command reads them. After the command, what changed is read back as a runner's copy reports it
// (contract/runner-protocol.ts RunnerChange), for the same conditional sync through the guard.
import type { InMemoryFs } from 'just-bash';
import type { RunnerChange } from '../../contract/runner-protocol.ts';
import { sha256Hex } from '../../core/content-hash.ts';
import { manifestLinkTarget, relativeLinkTarget } from '../../core/link-target.ts';
import type { ManifestEntry } from '../../workspace/manifest.ts';

/** A workspace as the copy is made of it: its entries, and a file's bytes when a command first reads them. */
export interface EdgeSource {
  entries: readonly ManifestEntry[];
  read(path: string, entry: ManifestEntry): Promise<Uint8Array>;
}

/** Where the workspace is, for the command: where a runner's sandbox binds it too. */
export const EDGE_WORKSPACE = '/workspace';

/** The filesystem calls that change something, and which of their arguments name what they change. */
const CHANGING: Record<string, readonly number[]> = {
  writeFile: [0],
  appendFile: [0],
  mkdir: [0],
  rm: [0],
  cp: [1],
  mv: [0, 1],
  symlink: [1],
  link: [1],
};

/** A segment of the paths a command changed; `all`: the path ending here was named, so all below it counts. */
interface TouchedNode {
  all: boolean;
  children: Map<string, TouchedNode>;
}

export class EdgeCopy {
  /** Paths (virtual) a command changed, as a tree of segments: only these, what lies below and what lies above them are compared with the manifest. */
  private readonly touched: TouchedNode = { all: false, children: new Map() };
  /** The manifest's entries when the copy was made, by path. */
  private readonly known = new Map<string, ManifestEntry>();
  /** Links the copy does not hold: their targets leave the workspace (a runner's copy leaves them out too). */
  private readonly unwritten = new Set<string>();
  /** The filesystem the interpreter is given: the copy, watched for changes. */
  readonly fs: InMemoryFs;

  private constructor(private readonly memory: InMemoryFs) {
    this.fs = this.watched(memory);
  }

  /** Copies the workspace's entries into `memory` (a new InMemoryFs), contents on first read. */
  static async of(source: EdgeSource, memory: InMemoryFs): Promise<EdgeCopy> {
    const copy = new EdgeCopy(memory);
    memory.mkdirSync(EDGE_WORKSPACE, { recursive: true });
    const links: ManifestEntry[] = [];
    for (const entry of source.entries) {
      copy.known.set(entry.path, entry);
      const at = `${EDGE_WORKSPACE}/${entry.path}`;
      if (entry.type === 'dir') memory.mkdirSync(at, { recursive: true });
      else if (entry.type === 'symlink') links.push(entry);
      else memory.writeFileLazy(at, () => source.read(entry.path, entry), { mode: 0o644 });
    }
    for (const link of links) {
      const target = relativeLinkTarget(link.path, link.target ?? '');
      if (target === undefined) copy.unwritten.add(link.path);
      else await memory.symlink(target, `${EDGE_WORKSPACE}/${link.path}`);
    }
    return copy;
  }

  /**
   * What the command changed, as a runner's copy reports it (parents before children, deletes
   * last), and what no disk could hold, with why: the in-memory filesystem lets a file be written
   * below a path that is a file, where the kernel refuses it.
   */
  async changes(): Promise<{ changes: RunnerChange[]; skipped: { path: string; reason: string }[] }> {
    const changes: RunnerChange[] = [];
    const skipped: { path: string; reason: string }[] = [];
    const blocked = new Map<string, string | null>();
    const seen = new Set<string>();
    const paths = this.memory
      .getAllPaths()
      .filter((path) => path.startsWith(`${EDGE_WORKSPACE}/`))
      .map((path) => path.slice(EDGE_WORKSPACE.length + 1))
      .sort();
    for (const path of paths) {
      seen.add(path);
      // Nothing else can have changed: every change goes through a call noted below (and a
      // directory above a path it names may have been made on the way: mkdir -p, a redirect).
      if (!this.isExamined(path)) continue;
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
      const blocking = await this.fileAbove(path, blocked);
      if (blocking !== undefined) {
        skipped.push({ path, reason: `${blocking} is not a directory, so nothing can be kept below it` });
        continue;
      }
      const stat = await this.memory.lstat(at);
      if (stat.isSymbolicLink) {
        const target = manifestLinkTarget(path, await this.memory.readlink(at), [EDGE_WORKSPACE]);
        if (known?.type !== 'symlink' || known.target !== target)
          changes.push({ op: 'symlink', path, target, baseVersion });
      } else if (stat.isDirectory) {
        if (known?.type !== 'dir') changes.push({ op: 'mkdir', path });
      } else {
        const content = await this.memory.readFileBuffer(at);
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

  /**
   * The first path above `path` that is not a directory in the copy, if any. `blocked` remembers
   * the answer for each directory asked, so each path costs one look at its parent.
   */
  private async fileAbove(path: string, blocked: Map<string, string | null>): Promise<string | undefined> {
    const slash = path.lastIndexOf('/');
    if (slash < 0) return undefined;
    const parent = path.slice(0, slash);
    let answer = blocked.get(parent);
    if (answer === undefined) {
      const stat = await this.memory.lstat(`${EDGE_WORKSPACE}/${parent}`).catch(() => undefined);
      answer = stat !== undefined && !stat.isDirectory ? parent : ((await this.fileAbove(parent, blocked)) ?? null);
      blocked.set(parent, answer);
    }
    return answer ?? undefined;
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

  /** The filesystem with each changing call noted, by the path it names and the path it ends at (through links). */
  private watched(memory: InMemoryFs): InMemoryFs {
    const note = async (path: unknown) => {
      if (typeof path !== 'string') return;
      const absolute = memory.resolvePath('/', path);
      this.noteAbsolute(absolute);
      this.noteAbsolute(await memory.realpath(absolute).catch(() => absolute));
    };
    return new Proxy(memory, {
      get: (target, name, receiver) => {
        const value = Reflect.get(target, name, receiver) as unknown;
        const named = typeof name === 'string' ? CHANGING[name] : undefined;
        if (named === undefined || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          // A file written goes where the kernel would put it: through links.
          if ((name === 'writeFile' || name === 'appendFile') && typeof args[0] === 'string')
            args[0] = await writtenPath(memory, args[0]);
          // Noted before as well: a call that fails half-way may have changed something.
          for (const index of named) await note(args[index]);
          try {
            return await (value as (...args: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            for (const index of named) await note(args[index]);
          }
        };
      },
    });
  }

  private noteAbsolute(absolute: string): void {
    if (absolute !== EDGE_WORKSPACE && !absolute.startsWith(`${EDGE_WORKSPACE}/`)) return;
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
 * The deepest path (in names) whose changes the edge engine keeps: its in-memory filesystem costs
 * time in the square of a path's depth for each look-up, which a path thousands deep would make
 * minutes. A runner keeps any depth the guard allows.
 */
export const MAX_EDGE_DEPTH = 256;

function depthOf(path: string): number {
  let depth = 1;
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) depth += 1;
  return depth;
}

/** The most links a path is followed through, as Linux allows (ELOOP beyond). */
const MAX_LINK_HOPS = 40;

/**
 * Where a write to `path` lands on a POSIX filesystem: a link at the path is followed to its target
 * (just-bash's in-memory filesystem would replace the link with a file). A directory that does not
 * exist is left to the interpreter, which creates it where bash would fail: a divergence the
 * engine's allow-list accounts for.
 */
async function writtenPath(memory: InMemoryFs, path: string): Promise<string> {
  let at = memory.resolvePath('/', path);
  for (let hop = 0; hop <= MAX_LINK_HOPS; hop += 1) {
    const slash = at.lastIndexOf('/');
    const directory = await memory.realpath(slash <= 0 ? '/' : at.slice(0, slash)).catch(() => undefined);
    if (directory === undefined) return at;
    at = `${directory === '/' ? '' : directory}/${at.slice(slash + 1)}`;
    const stat = await memory.lstat(at).catch(() => undefined);
    if (!stat?.isSymbolicLink) return at;
    at = memory.resolvePath(directory, await memory.readlink(at));
  }
  throw new Error(`ELOOP: too many levels of symbolic links, open '${path}'`);
}

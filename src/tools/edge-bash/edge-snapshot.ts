// A workspace state as the edge engine's filesystem holds it, shared by the commands run over that
// state: each command's filesystem starts from its tree and copies a node (with the directories
// above it) the first time it changes it (EdgeOwnership.own), so no command's change reaches the tree or
// another command, and building the tree (thousands of nodes) and reading its files happen once for
// the state rather than once for each command. An edge thread keeps it for the state's next command.
import { relativeLinkTarget } from '../../core/link-target.ts';
import type { ManifestEntry } from '../../workspace/manifest-entry.ts';
import { EdgeFs } from './edge-fs.ts';
import type { SharedTree } from './edge-fs-nodes.ts';

/** Where the workspace is, for the command: where a runner's sandbox binds it too. */
export const EDGE_WORKSPACE = '/workspace';

/**
 * The workspace contents the states a thread keeps may hold for their next commands, all together:
 * a state's files keep what a command read only while the total is within it.
 */
export class SharedContentBudget {
  private held = 0;

  constructor(private readonly maxBytes: number) {}

  take(bytes: number): boolean {
    if (this.held + bytes > this.maxBytes) return false;
    this.held += bytes;
    return true;
  }

  giveBack(bytes: number): void {
    this.held -= bytes;
  }
}

export class EdgeSnapshot {
  /** What a command's filesystem starts from (EdgeFsOptions.base). */
  readonly tree: SharedTree;
  /** The bytes of content this state's files keep, taken from the budget. */
  private keptBytes = 0;
  private retired = false;

  private constructor(
    readonly entries: readonly ManifestEntry[],
    /** Whose blobs the files are (the workspace's store): a thread gives a kept state only to commands of the same. */
    readonly scope: string | undefined,
    private readonly budget: SharedContentBudget | undefined,
    built: EdgeFs,
    /** The manifest's entries when the state was listed, by path: what a command's changes are compared with. */
    readonly known: ReadonlyMap<string, ManifestEntry>,
    /** Links the tree does not hold: their targets leave the workspace (a runner's copy leaves them out too). */
    readonly unwritten: ReadonlySet<string>,
  ) {
    this.tree = built.shared((bytes) => this.keep(bytes));
  }

  /**
   * The workspace's entries under /workspace, an empty /tmp (as a runner's sandbox gives; HOME is
   * there too) and the interpreter's own files (`layout`, edge-layout.ts: the tree starts from it,
   * sharing its nodes and following its ids, so that no two nodes share an identity). Without a
   * `budget` its files keep every content a command reads (a state made for one command).
   */
  static async of(
    entries: readonly ManifestEntry[],
    options: { layout?: EdgeFs; scope?: string; budget?: SharedContentBudget } = {},
  ): Promise<EdgeSnapshot> {
    const built = new EdgeFs({ base: options.layout?.shared(() => false) });
    built.mkdirSync(EDGE_WORKSPACE, { recursive: true });
    built.mkdirSync('/tmp');
    built.addEntries(EDGE_WORKSPACE, entries);
    const known = new Map<string, ManifestEntry>();
    const unwritten = new Set<string>();
    for (const entry of entries) {
      known.set(entry.path, entry);
      if (entry.type !== 'symlink') continue;
      const target = relativeLinkTarget(entry.path, entry.target ?? '');
      if (target === undefined) unwritten.add(entry.path);
      else await built.symlink(target, `${EDGE_WORKSPACE}/${entry.path}`);
    }
    return new EdgeSnapshot(entries, options.scope, options.budget, built, known, unwritten);
  }

  /** No longer kept for later commands: its contents go back to the budget, and it keeps no more. */
  retire(): void {
    if (this.retired) return;
    this.retired = true;
    this.budget?.giveBack(this.keptBytes);
    this.keptBytes = 0;
  }

  private keep(bytes: number): boolean {
    if (this.budget === undefined) return true;
    if (this.retired || !this.budget.take(bytes)) return false;
    this.keptBytes += bytes;
    return true;
  }
}

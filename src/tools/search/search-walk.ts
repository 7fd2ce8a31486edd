// The files a search looks at: a walk of the workspace's manifest with ripgrep's rules (rg --sort path -L).
import { ToolError } from '../../core/errors.ts';
import { parseVirtualPath } from '../../core/virtual-path.ts';
import { WorkBudget } from '../../core/work-budget.ts';
import type { ManifestEntry } from '../../workspace/manifest.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import { comparePaths } from './compare-paths.ts';
import { childPath, directoryRules, directoryRulesAt, followTo } from './ignore-files.ts';
import { hasRules, parentLevel, walkedLevel, type DirectoryRules, type IgnoreLevel } from './ignore-levels.ts';
import { admits, walkFilter, type WalkFilter } from './walk-filter.ts';

export { comparePaths } from './compare-paths.ts';

export interface WalkOptions {
  /** A file or directory, through the path guard; default the root. */
  path?: string | undefined;
  /** rg --hidden: names starting with '.' too, `.git` included. */
  hidden: boolean;
  /** rg --no-ignore: no .gitignore, .ignore, .rgignore or .git/info/exclude rules. */
  noIgnore: boolean;
  /** rg -g: override globs, "!" excludes. */
  globs: readonly string[];
  /** rg -t NAME. */
  type?: string | undefined;
}

export interface WalkedFile {
  /** As reported: under the path searched, through links, without a leading '/'. */
  path: string;
  /** Where the content lives, for workspace.readBytes(resolvedPath, entry). */
  resolvedPath: string;
  entry: ManifestEntry;
}

/**
 * The most entries one walk visits. Links may reach one directory under many paths (as rg -L
 * follows them), so a small workspace can stand for an exponential tree; past this the call is
 * refused rather than left to fill the server's memory.
 */
export const MAX_WALKED_ENTRIES = 1_000_000;

/** Work units (see WorkBudget) of one entry looked at, and of one directory listed. */
const ENTRY_COST = 500;
const DIRECTORY_COST = 5_000;

interface Frame {
  reportedDir: string;
  realDir: string;
  children: readonly ManifestEntry[];
  next: number;
  level: IgnoreLevel | undefined;
}

/**
 * The files ripgrep would search for `options`, in comparePaths order. A directory's walk is
 * remembered for the workspace's state (see Workspace.derived): agents search the same tree again
 * and again between edits, and a repeated search then costs the matching alone.
 */
export async function walkWorkspace(
  workspace: Workspace,
  options: WalkOptions,
  clock: WorkBudget = new WorkBudget(Number.POSITIVE_INFINITY),
): Promise<readonly WalkedFile[]> {
  const filter = walkFilter(options);
  const shown = options.path ?? '';
  const start = await workspace.resolve(shown, 'read', { directory: true });
  const reported = parseVirtualPath(shown, { directory: true }).path;
  const entry = start.entry as ManifestEntry | undefined;
  if (entry === undefined) {
    throw new ToolError('not_found', `${shown} does not exist; search its parent directory or the workspace root.`, {
      path: shown,
    });
  }
  // A path named outright is searched whatever the rules say of it, as rg searches it.
  if (entry.type === 'file') return [{ path: reported, resolvedPath: start.path, entry }];
  const { hidden, noIgnore, globs, type } = options;
  return workspace.derived(
    `walk ${JSON.stringify([reported, start.path, hidden, noIgnore, globs, type ?? null])}`,
    async () => {
      const above = filter.noIgnore ? undefined : await levelsAbove(workspace, start.path);
      return Object.freeze(await new Walk(workspace, filter, clock).run(reported, start.path, above));
    },
    (files) => files.length,
  );
}

/** The ignore files of the directories above the searched one (rg reads its parents' too), deepest last. */
async function levelsAbove(workspace: Workspace, searched: string): Promise<IgnoreLevel | undefined> {
  const segments = searched === '' ? [] : searched.split('/');
  let level: IgnoreLevel | undefined;
  for (let depth = 0; depth < segments.length; depth++) {
    const dir = segments.slice(0, depth).join('/');
    const rules = await directoryRulesAt(workspace, dir);
    if (hasRules(rules)) level = parentLevel(rules, segments.slice(depth).join('/'), level);
  }
  return level;
}

class Walk {
  private readonly found: WalkedFile[] = [];
  private readonly stack: Frame[] = [];
  private visited = 0;
  /**
   * Where each link leads and each real directory's ignore rules, worked out once a walk: links
   * may reach one directory under many paths, and each visit would otherwise ask the guard again.
   */
  private readonly links = new Map<string, { path: string; entry: ManifestEntry } | undefined>();
  private readonly rules = new Map<string, DirectoryRules>();

  constructor(
    private readonly workspace: Workspace,
    private readonly filter: WalkFilter,
    private readonly clock: WorkBudget,
  ) {}

  async run(reportedDir: string, realDir: string, above: IgnoreLevel | undefined): Promise<WalkedFile[]> {
    await this.enter(reportedDir, realDir, above);
    while (this.stack.length > 0) {
      const frame = this.stack[this.stack.length - 1]!;
      if (frame.next >= frame.children.length) {
        this.stack.pop();
        continue;
      }
      const child = frame.children[frame.next++]!;
      // A plain file is settled at once; only links and directories wait (on the guard, on ignore files).
      if (child.type === 'file') this.keep(frame, child, child, child.path);
      else await this.visit(frame, child);
      if (this.clock.spend(ENTRY_COST)) await this.clock.pause();
    }
    return this.found;
  }

  /** Lists a directory and pushes it: its entries come next, in name order. */
  private async enter(reportedDir: string, realDir: string, above: IgnoreLevel | undefined): Promise<void> {
    const listed = this.workspace.entriesIn(realDir);
    const children = inNameOrder(listed) ? listed : [...listed].sort((a, b) => comparePaths(a.path, b.path));
    this.visited += children.length;
    if (this.visited > MAX_WALKED_ENTRIES) {
      throw new ToolError(
        'invalid_argument',
        `The search reaches more than ${MAX_WALKED_ENTRIES} entries (symlinks lead to the same directories many times); search a narrower path.`,
        { path: reportedDir, limit: MAX_WALKED_ENTRIES },
      );
    }
    let level = above;
    if (!this.filter.noIgnore) {
      let rules = this.rules.get(realDir);
      if (rules === undefined) {
        const byName = nameIndex(realDir, children);
        rules = await directoryRules(this.workspace, realDir, (name) => byName.get(name));
        this.rules.set(realDir, rules);
      }
      if (hasRules(rules)) level = walkedLevel(rules, reportedDir, above);
    }
    this.stack.push({ reportedDir, realDir, children, next: 0, level });
    if (this.clock.spend(DIRECTORY_COST + children.length)) await this.clock.pause();
  }

  private async visit(frame: Frame, child: ManifestEntry): Promise<void> {
    let target = child;
    let targetPath = child.path;
    if (child.type === 'symlink') {
      // Followed where the guard allows; a link out of the workspace, a loop or a dangling link is skipped.
      let followed = this.links.get(child.path);
      if (!this.links.has(child.path)) {
        followed = await followTo(this.workspace, child.path);
        this.links.set(child.path, followed);
      }
      if (followed === undefined) return;
      target = followed.entry;
      targetPath = followed.path;
    }
    if (target.type !== 'dir') {
      this.keep(frame, child, target, targetPath);
      return;
    }
    const name = frame.realDir === '' ? child.path : child.path.slice(frame.realDir.length + 1);
    const path = childPath(frame.reportedDir, name);
    if (!admits(this.filter, frame.level, path, name, true)) return;
    // rg -L skips a link back to a directory it is already inside.
    if (child.type === 'symlink' && this.stack.some((open) => open.realDir === targetPath)) return;
    await this.enter(path, targetPath, frame.level);
  }

  /** Keeps a file (`child`, or the file a link `child` leads to) when the filter admits it. */
  private keep(frame: Frame, child: ManifestEntry, target: ManifestEntry, targetPath: string): void {
    const name = frame.realDir === '' ? child.path : child.path.slice(frame.realDir.length + 1);
    const path = childPath(frame.reportedDir, name);
    if (admits(this.filter, frame.level, path, name, false))
      this.found.push({ path, resolvedPath: targetPath, entry: target });
  }
}

function inNameOrder(entries: readonly ManifestEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) if (comparePaths(entries[i - 1]!.path, entries[i]!.path) > 0) return false;
  return true;
}

function nameIndex(dir: string, children: readonly ManifestEntry[]): Map<string, ManifestEntry> {
  const cut = dir === '' ? 0 : dir.length + 1;
  const byName = new Map<string, ManifestEntry>();
  for (const child of children) if (child.path.charCodeAt(cut) === 0x2e) byName.set(child.path.slice(cut), child);
  return byName;
}

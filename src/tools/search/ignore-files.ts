// Reading a directory's ignore files (.rgignore, .ignore, .gitignore, .git/info/exclude) from the workspace.
import { ToolError } from '../../core/errors.ts';
import type { ManifestEntry } from '../../workspace/manifest.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import type { DirectoryRules } from './ignore-levels.ts';
import { gitignoreRules, ignoreFileLines, type PathRules } from './path-rules.ts';

/** Finds a directory's entry by name (from a listing already read, or from the manifest). */
type EntryByName = (name: string) => ManifestEntry | undefined;

/** The rules of the walked directory `dir`, whose entries `byName` finds. */
export function directoryRules(workspace: Workspace, dir: string, byName: EntryByName): Promise<DirectoryRules> {
  return readRules(workspace, dir, byName);
}

/** The rules of a directory above the searched path, looked up in the manifest. */
export function directoryRulesAt(workspace: Workspace, dir: string): Promise<DirectoryRules> {
  return readRules(workspace, dir, (name) => workspace.entry(childPath(dir, name)));
}

async function readRules(workspace: Workspace, dir: string, byName: EntryByName): Promise<DirectoryRules> {
  const rules: DirectoryRules = { hasGit: false };
  const custom = await readIgnoreFile(workspace, childPath(dir, '.rgignore'), byName('.rgignore'));
  if (custom) rules.custom = custom;
  const ignore = await readIgnoreFile(workspace, childPath(dir, '.ignore'), byName('.ignore'));
  if (ignore) rules.ignore = ignore;
  const git = await readIgnoreFile(workspace, childPath(dir, '.gitignore'), byName('.gitignore'));
  if (git) rules.git = git;
  const dotGit = byName('.git');
  if (dotGit !== undefined && (dotGit.type !== 'symlink' || (await follow(workspace, dotGit.path)) !== undefined)) {
    rules.hasGit = true;
    const excludePath = childPath(dir, '.git/info/exclude');
    const exclude = await readIgnoreFile(workspace, excludePath, await follow(workspace, excludePath));
    if (exclude) rules.exclude = exclude;
  }
  return rules;
}

/** An ignore file's rules; a missing file, a directory, or a link the guard refuses holds none. */
async function readIgnoreFile(
  workspace: Workspace,
  path: string,
  entry: ManifestEntry | undefined,
): Promise<PathRules | undefined> {
  let at = path;
  let found = entry;
  if (found?.type === 'symlink') {
    const resolved = await followTo(workspace, path);
    at = resolved?.path ?? path;
    found = resolved?.entry;
  }
  if (found?.type !== 'file') return undefined;
  return gitignoreRules(ignoreFileLines(await workspace.readBytes(at, found)));
}

async function follow(workspace: Workspace, path: string): Promise<ManifestEntry | undefined> {
  return (await followTo(workspace, path))?.entry;
}

/** Where a path leads through links, or undefined when the guard refuses it (outside, a loop) or nothing is there. */
export async function followTo(
  workspace: Workspace,
  path: string,
): Promise<{ path: string; entry: ManifestEntry } | undefined> {
  try {
    const resolved = await workspace.resolve(path, 'read');
    return resolved.entry === undefined ? undefined : { path: resolved.path, entry: resolved.entry };
  } catch (error) {
    if (error instanceof ToolError) return undefined;
    throw error;
  }
}

export function childPath(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

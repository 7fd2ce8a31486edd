// The ignore files in force at a point of a walk, deepest first, and ripgrep's way of weighing them.
import type { PathRules, RuleMatch } from './path-rules.ts';

/** The rules one directory's ignore files hold. */
export interface DirectoryRules {
  /** `.rgignore` */
  custom?: PathRules;
  /** `.ignore` */
  ignore?: PathRules;
  /** `.gitignore` */
  git?: PathRules;
  /** `.git/info/exclude` */
  exclude?: PathRules;
  /** The directory holds a `.git`: git ignore rules of the directories above it do not reach into it. */
  hasGit: boolean;
}

/** One directory with ignore rules, linked to the next one above it. */
export interface IgnoreLevel extends DirectoryRules {
  above: IgnoreLevel | undefined;
  /** Characters cut from the front of a reported path, then `prepend` put there: the path its rules see. */
  strip: number;
  prepend: string;
}

/** Whether a directory's rules can say anything; a level is kept only then. */
export function hasRules(rules: DirectoryRules): boolean {
  return (
    rules.hasGit ||
    rules.custom !== undefined ||
    rules.ignore !== undefined ||
    rules.git !== undefined ||
    rules.exclude !== undefined
  );
}

/** `rules` as the level of the walked directory reported at `reportedDir`, below `above`. */
export function walkedLevel(rules: DirectoryRules, reportedDir: string, above: IgnoreLevel | undefined): IgnoreLevel {
  return { ...rules, above, strip: reportedDir === '' ? 0 : reportedDir.length + 1, prepend: '' };
}

/**
 * `rules` as the level of a directory above the searched path. ripgrep 13 joins the searched
 * path's canonical form with each path as walked (already starting with the searched path), so
 * these rules see the searched part twice: `sub/x` searched as `sub` is `sub/sub/x` to the root's
 * rules. Only unanchored rules (`*.log`) then match, and answers stay identical to rg's.
 */
export function parentLevel(rules: DirectoryRules, fromParentToSearched: string, above: IgnoreLevel | undefined) {
  return { ...rules, above, strip: 0, prepend: `${fromParentToSearched}/` };
}

/**
 * The verdict of the ignore files on a path, as ripgrep gives it: `.rgignore` rules before
 * `.ignore` rules before `.gitignore` before `.git/info/exclude`, each kind's deepest match
 * winning; git's rules stop at the first directory (going up) that holds a `.git`.
 */
export function matchIgnoreLevels(level: IgnoreLevel | undefined, path: string, isDir: boolean): RuleMatch {
  let custom: RuleMatch;
  let ignore: RuleMatch;
  let git: RuleMatch;
  let exclude: RuleMatch;
  let sawGit = false;
  for (let at = level; at !== undefined; at = at.above) {
    const relative = at.prepend + path.slice(at.strip);
    if (custom === undefined && at.custom) custom = at.custom.match(relative, isDir);
    if (ignore === undefined && at.ignore) ignore = at.ignore.match(relative, isDir);
    if (!sawGit) {
      if (git === undefined && at.git) git = at.git.match(relative, isDir);
      if (exclude === undefined && at.exclude) exclude = at.exclude.match(relative, isDir);
    }
    sawGit ||= at.hasGit;
  }
  return custom ?? ignore ?? git ?? exclude;
}

// Gitignore-style rules (the `ignore` package's matcher) asked about one path at a time, as ripgrep asks them.
import ignore from 'ignore';

/** What the last matching rule says of a path: a plain rule ignores it, a `!` rule whitelists it. */
export type RuleMatch = 'ignore' | 'whitelist' | undefined;

export interface PathRules {
  /** `path` is relative to the rules' directory, without a leading '/'. */
  match(path: string, isDir: boolean): RuleMatch;
}

/** The part of the `ignore` package's rule list that tests one path without its parent directories. */
interface SinglePathRules {
  test(path: string, mode: 'regex'): { ignored: boolean; unignored: boolean };
}

/**
 * Rules from gitignore lines, case-sensitive as ripgrep's are by default. ripgrep matches each path alone (a walk never reaches the children
 * of an ignored directory), so a directory ignored by one file and whitelisted by a stronger one
 * leaves its children to be judged on their own; the package's `test` would carry the parent's
 * verdict down, so the rule list is asked directly.
 */
export function gitignoreRules(lines: readonly string[]): PathRules {
  const matcher = ignore({ ignorecase: false, allowRelativePaths: true }).add(lines as string[]);
  const rules = (matcher as unknown as { _rules?: SinglePathRules })._rules;
  if (rules === undefined || typeof rules.test !== 'function') {
    throw new Error('the ignore package no longer exposes its rule list; pin the version this code was written for');
  }
  return {
    match(path, isDir) {
      const result = rules.test(isDir ? `${path}/` : path, 'regex');
      if (result.ignored) return 'ignore';
      return result.unignored ? 'whitelist' : undefined;
    },
  };
}

/** The lines of an ignore file (ripgrep reads it as UTF-8, replacing what is not). */
export function ignoreFileLines(content: Uint8Array): string[] {
  return new TextDecoder('utf-8').decode(content).split(/\r?\n/);
}

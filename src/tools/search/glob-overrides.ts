// ripgrep's override globs (-g): they decide before every ignore rule, and any plain glob makes a whitelist.
import { expandGlob } from './glob-syntax.ts';
import { gitignoreRules, type PathRules, type RuleMatch } from './path-rules.ts';

export interface GlobOverrides {
  /** `path` as reported (relative to the workspace root). */
  match(path: string, isDir: boolean): RuleMatch;
}

/**
 * The overrides of `globs`, or undefined for none. A glob matching a path whitelists it (past
 * ignore rules and hidden names), a `!glob` ignores it; with any plain glob, a file none matches
 * is ignored, while directories are still entered so that their files can match.
 */
export function globOverrides(globs: readonly string[]): GlobOverrides | undefined {
  if (globs.length === 0) return undefined;
  const lines = globs.flatMap(expandGlob);
  const rules: PathRules = gitignoreRules(lines);
  const whitelists = lines.some((line) => !line.startsWith('!') && !line.startsWith('#') && line.trim() !== '');
  return {
    match(path, isDir) {
      const found = rules.match(path, isDir);
      if (found === 'ignore') return 'whitelist';
      if (found === 'whitelist') return 'ignore';
      return whitelists && !isDir ? 'ignore' : undefined;
    },
  };
}

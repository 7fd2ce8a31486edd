// Whether a walked entry is kept: override globs, then ignore files, then the file type, then hidden names.
import { ToolError } from '../../core/errors.ts';
import { fileTypeFilter } from './file-type-filter.ts';
import { globOverrides, type GlobOverrides } from './glob-overrides.ts';
import { matchIgnoreLevels, type IgnoreLevel } from './ignore-levels.ts';

export interface WalkFilter {
  overrides: GlobOverrides | undefined;
  fileType: ((name: string) => boolean) | undefined;
  hidden: boolean;
  noIgnore: boolean;
}

/** The filter of a walk's options; an invalid glob or an unknown type is invalid_argument. */
export function walkFilter(options: {
  hidden: boolean;
  noIgnore: boolean;
  globs: readonly string[];
  type?: string | undefined;
}): WalkFilter {
  for (const glob of options.globs) {
    if (glob.includes('\u0000')) throw new ToolError('invalid_argument', 'A glob may not contain NUL.', { glob });
  }
  return {
    overrides: globOverrides(options.globs),
    fileType: options.type === undefined ? undefined : fileTypeFilter(options.type),
    hidden: options.hidden,
    noIgnore: options.noIgnore,
  };
}

/**
 * ripgrep's verdict on an entry below the searched path: an override glob settles it outright; an
 * ignore rule that ignores settles it; a file of another type is dropped; a hidden name is
 * dropped unless an ignore rule or the type whitelisted it (so `-t ts` finds `.eslintrc.ts`).
 */
export function admits(
  filter: WalkFilter,
  level: IgnoreLevel | undefined,
  path: string,
  name: string,
  isDir: boolean,
): boolean {
  if (filter.overrides) {
    const verdict = filter.overrides.match(path, isDir);
    if (verdict !== undefined) return verdict === 'whitelist';
  }
  let whitelisted = false;
  if (!filter.noIgnore && level !== undefined) {
    const verdict = matchIgnoreLevels(level, path, isDir);
    if (verdict === 'ignore') return false;
    whitelisted = verdict === 'whitelist';
  }
  if (filter.fileType && !isDir) {
    if (!filter.fileType(name)) return false;
    whitelisted = true;
  }
  return whitelisted || filter.hidden || !name.startsWith('.');
}

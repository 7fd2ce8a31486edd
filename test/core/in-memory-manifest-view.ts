// A ManifestView over a plain record, for guard tests: every ancestor of an entry exists as a directory.
import type { GuardEntry, ManifestView } from '../../src/core/path-guard.ts';

export const file: GuardEntry = { type: 'file' };
export const dir: GuardEntry = { type: 'dir' };
export const link = (target: string | null): GuardEntry => ({ type: 'symlink', target });

export interface InMemoryManifestView extends ManifestView {
  /** Every path looked up so far, in order. */
  readonly lookups: string[];
}

export function manifestView(entries: Record<string, GuardEntry>): InMemoryManifestView {
  const known = new Map<string, GuardEntry>([['', dir]]);
  for (const path of Object.keys(entries)) {
    const names = path.split('/');
    for (let i = 1; i < names.length; i++) {
      const ancestor = names.slice(0, i).join('/');
      if (!known.has(ancestor)) known.set(ancestor, dir);
    }
  }
  for (const [path, entry] of Object.entries(entries)) known.set(path, entry);
  const lookups: string[] = [];
  return {
    lookups,
    entry(path: string) {
      lookups.push(path);
      return known.get(path);
    },
  };
}

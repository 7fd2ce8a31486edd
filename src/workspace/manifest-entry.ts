// One row of a workspace's manifest: what the manifest, its batched commit statements and every reader share.
import type { EntryType } from '../core/path-guard.ts';

/** One row of the manifest (a type alias, so it serves as the SQL row type too). */
export type ManifestEntry = {
  path: string;
  type: EntryType;
  blob: string | null;
  target: string | null;
  size: number;
  version: number;
};

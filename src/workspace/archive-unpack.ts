// Reads a tar into a workspace's store as it arrives: each entry through the path guard in archive order, each file's content stored at once.
import type { ArrivingBytes } from '../core/arriving-bytes.ts';
import { ToolError } from '../core/errors.ts';
import { linkTargetPath } from '../core/link-target.ts';
import { isBelow } from '../core/virtual-path.ts';
import { readArrivingTar, type TarEntry } from './tar-reader.ts';
import { assertNothingBelowFiles, guardRefusal, malformed, refusal, tooLarge } from './archive-refusals.ts';
import { ContentStores } from './archive-content-stores.ts';
import type { Workspace } from './workspace.ts';

/** What the archive puts at a path. A file's blob is filled in once its content is stored. */
export type ArchivedEntry =
  { type: 'file'; size: number; blob: string } | { type: 'dir' } | { type: 'symlink'; target: string };

export interface UnpackedArchive {
  /** By canonical workspace path, in archive order; a later entry for a path replaces an earlier one, as `tar -x` does. */
  entries: Map<string, ArchivedEntry>;
  /** Entries of kinds a workspace cannot hold (devices, fifos), left out. */
  skipped: { entry: string; reason: string }[];
  /** The files' contents, being made durable (see ArchiveContents). */
  contents: ArchiveContents;
}

/**
 * The contents of an archive's files as the store makes them durable. Every file's `blob` is known
 * once `blobsKnown()`, which may be before they are durable: a commit naming them must not land
 * before `durableNow` says they are, or `settled` has resolved.
 */
export interface ArchiveContents {
  /** Resolves once every content is durable; rejects with the first failure. */
  settled: Promise<void>;
  /** Whether every file's blob is filled in (the store told the ids before their writes ended, or they ended). */
  blobsKnown(): boolean;
  /**
   * Whether every content is durable now, blocking this thread at most `timeoutMs` for the writes
   * that tell it through shared memory (PutManyOptions); false at once when a write cannot tell it
   * so, or failed (`settled` then says why).
   */
  durableNow(timeoutMs: number): boolean;
}

export interface UnpackLimits {
  /** The largest file, as for every write. */
  maxFileBytes: number;
  /** Entries one archive may hold. */
  maxEntries: number;
}

/**
 * Entries one archive may hold: its plan is kept in memory until the one commit that writes every
 * entry, and 100,000 is ten pages of a full listing.
 */
export const MAX_ARCHIVE_ENTRIES = 100_000;

const DIRECTORY: ArchivedEntry = Object.freeze({ type: 'dir' });

/**
 * Reads every entry of the tar: its name joined under the resolved directory `root` and checked
 * by the path guard as a write, a link's target kept inside the workspace, a file within the file
 * limit. The first refusal ends the reading (the error names the entry in `details.entry`), and so
 * does a tar that cannot be read or is cut short; what was stored by then is content no version
 * names, which the store's collection reclaims. It answers once every entry is read and every
 * content has gone to the store, not once they are durable (see `contents`).
 *
 * The tar is read as its bytes arrive (`tar`, whose length the caller held to the body limit):
 * each entry is acted on once its bytes are there, so the reading, the guard and the storing of
 * contents overlap the upload, and nothing is committed before the last entry. Each file's
 * content is a view of `tar.bytes`, not a copy.
 */
export async function unpackArchive(
  workspace: Workspace,
  tar: ArrivingBytes,
  root: string,
  limits: UnpackLimits,
): Promise<UnpackedArchive> {
  const entries = new Map<string, ArchivedEntry>();
  const skipped: UnpackedArchive['skipped'] = [];
  const names = new Map<string, string>();
  const stores = new ContentStores(workspace);
  // The directories the archive names below `root` are taken as directories (see guardedPath).
  const planned = (path: string) => (isBelow(path, root) ? DIRECTORY : undefined);
  const unpacking: Unpacking = { workspace, root, limits, planned, archive: { entries, skipped }, stores };
  const fileLimit = (entry: TarEntry) => {
    if (entry.type === 'file' && entry.size > limits.maxFileBytes)
      throw tooLarge(entry.name, entry.size, limits.maxFileBytes);
  };
  let count = 0;
  try {
    for (const read of readArrivingTar(tar.bytes, () => tar.available, fileLimit)) {
      if (typeof read === 'number') {
        await tar.until(read);
        continue;
      }
      count += 1;
      if (count > limits.maxEntries) {
        throw new ToolError(
          'payload_too_large',
          `The archive holds more than ${limits.maxEntries} entries; send it in parts (PUT with mode merge and a prefix each).`,
          { limit: limits.maxEntries },
        );
      }
      const path = readEntry(unpacking, read);
      if (path !== undefined) names.set(path, read.name);
      // The contents' sets in flight are full: the next entry waits for room.
      if (unpacking.full !== undefined) {
        await unpacking.full;
        unpacking.full = undefined;
      }
    }
    assertNothingBelowFiles(entries, names);
    await stores.sendLast();
  } catch (error) {
    await stores.settled();
    throw malformed(error);
  }
  const settled = stores.finished();
  // Heard by whoever awaits it; a failure before anyone does must not count as unhandled.
  settled.catch(() => undefined);
  return {
    entries,
    skipped,
    contents: {
      settled,
      blobsKnown: () => stores.blobsKnown(),
      durableNow: (timeoutMs) => stores.durableNow(timeoutMs),
    },
  };
}

/** What reading each entry needs: made once an archive (a closure made per entry costs, see path-guard). */
interface Unpacking {
  workspace: Workspace;
  root: string;
  limits: UnpackLimits;
  planned: (path: string) => ArchivedEntry | undefined;
  archive: Pick<UnpackedArchive, 'entries' | 'skipped'>;
  stores: ContentStores;
  /** Set when the last content added filled the sets in flight: resolves once there is room. */
  full?: Promise<void> | undefined;
}

/** Reads one entry into the archive's plan (synchronously: see ManifestView), answering its workspace path. */
function readEntry(unpacking: Unpacking, header: TarEntry): string | undefined {
  const { workspace, root, limits, planned, archive, stores } = unpacking;
  const type = header.type;
  const path = guardedPath(workspace, header.name, root, planned, type === 'directory');
  if (path === root) {
    // `./` names the directory the archive is unpacked into: nothing to do.
    if (type === 'directory') return undefined;
    throw refusal(
      header.name,
      'invalid_argument',
      `names the directory the archive is unpacked into (${JSON.stringify(root)}), not a file`,
    );
  }
  switch (type) {
    case 'directory':
      archive.entries.set(path, DIRECTORY);
      return path;
    case 'file': {
      if (header.size > limits.maxFileBytes) throw tooLarge(header.name, header.size, limits.maxFileBytes);
      const file = { type: 'file' as const, size: header.size, blob: '' };
      archive.entries.set(path, file);
      unpacking.full = stores.add(file, header.data);
      return path;
    }
    case 'symlink': {
      const target = header.linkname;
      if (target === '') throw refusal(header.name, 'invalid_argument', 'is a symlink without a target');
      if (target.includes('\uFFFD'))
        throw refusal(
          header.name,
          'invalid_argument',
          'is a symlink whose target is not valid UTF-8; name targets in UTF-8',
        );
      if (target.startsWith('/') || linkTargetPath(path, target) === undefined)
        throw refusal(
          header.name,
          'path_outside_workspace',
          `is a symlink to ${JSON.stringify(target)}, which leads outside the workspace; archive links whose targets stay inside it, as relative paths`,
          { target },
        );
      archive.entries.set(path, { type: 'symlink', target });
      return path;
    }
    case 'link': {
      // A hard link holds the content of a file the archive gave before it: it becomes a copy.
      const source = guardedPathOrNone(workspace, header.linkname, root, planned);
      const file = source === undefined ? undefined : archive.entries.get(source);
      if (file?.type !== 'file')
        throw refusal(
          header.name,
          'invalid_argument',
          `is a hard link to ${JSON.stringify(header.linkname)}, which is not a file earlier in the archive; archive the file itself`,
          { target: header.linkname },
        );
      archive.entries.set(path, file);
      return path;
    }
    default:
      archive.skipped.push({
        entry: header.name,
        reason: `a ${type} is not kept: a workspace holds files, directories and symlinks`,
      });
      return undefined;
  }
}

/**
 * The canonical workspace path of an entry's name joined under `root`, through the path guard as a
 * write: the directories the archive names below `root` are taken as directories (which the commit
 * makes them), so a link the workspace has there now is never followed by a name of the archive.
 */
function guardedPath(
  workspace: Workspace,
  name: string,
  root: string,
  planned: (path: string) => ArchivedEntry | undefined,
  directory: boolean,
): string {
  // The decoder spells bytes that are not UTF-8 as U+FFFD, so a name that was not UTF-8 is never stored altered.
  if (name.includes('\uFFFD'))
    throw refusal(name, 'invalid_argument', 'has a name that is not valid UTF-8; name files in UTF-8');
  if (name.startsWith('/'))
    throw refusal(
      name,
      'path_outside_workspace',
      'has an absolute name; archive paths relative to the directory archived',
    );
  try {
    const resolved = workspace.resolveNow(root === '' ? name : `${root}/${name}`, 'write', {
      directory,
      followFinalSymlink: false,
      planned,
    });
    return resolved.path;
  } catch (error) {
    throw guardRefusal(name, error);
  }
}

/** A hard link's source as guardedPath finds it; undefined where the guard refuses it (the link is refused as not naming a file). */
function guardedPathOrNone(
  workspace: Workspace,
  name: string,
  root: string,
  planned: (path: string) => ArchivedEntry | undefined,
): string | undefined {
  try {
    return guardedPath(workspace, name, root, planned, false);
  } catch {
    return undefined;
  }
}

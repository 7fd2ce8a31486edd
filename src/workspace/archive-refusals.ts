// What an archive upload is refused with: each error names the entry (as the archive spells it) and says what to send instead.
import { isToolError, ToolError } from '../core/errors.ts';
import { parentPath } from '../core/virtual-path.ts';
import { TarFormatError } from './tar-reader.ts';

export type RefusalCode = 'invalid_argument' | 'path_outside_workspace';

/** The archive refused whole for its entry `entry`, `why` saying what is wrong with it. */
export function refusal(
  entry: string,
  code: RefusalCode,
  why: string,
  details: Record<string, unknown> = {},
): ToolError {
  return new ToolError(code, `The archive is refused whole: its entry ${JSON.stringify(entry)} ${why}.`, {
    entry,
    ...details,
  });
}

/** The path guard's refusal of an entry's name, as the archive's: naming the entry; anything else thrown passes through. */
export function guardRefusal(entry: string, error: unknown): unknown {
  if (!isToolError(error)) return error;
  return new ToolError(
    error.code,
    `The archive is refused whole: its entry ${JSON.stringify(entry)}: ${error.message}`,
    {
      ...error.details,
      entry,
    },
  );
}

/** Refuses an archive that puts an entry below one it gives as a file or a symlink (no commit could make both). */
export function assertNothingBelowFiles(
  entries: ReadonlyMap<string, { type: 'file' | 'dir' | 'symlink' }>,
  names: ReadonlyMap<string, string>,
): void {
  for (const path of entries.keys()) {
    for (let parent = parentPath(path); parent !== ''; parent = parentPath(parent)) {
      const above = entries.get(parent);
      if (above === undefined || above.type === 'dir') continue;
      const entry = names.get(path) ?? path;
      throw new ToolError(
        'invalid_argument',
        `The archive is refused whole: its entry ${JSON.stringify(entry)} lies below ${JSON.stringify(names.get(parent) ?? parent)}, which the archive gives as a ${above.type === 'file' ? 'file' : 'symlink'}.`,
        { entry },
      );
    }
  }
}

/** A file over the file limit (`limit` bytes). */
export function tooLarge(entry: string, size: number, limit: number): ToolError {
  return new ToolError(
    'payload_too_large',
    `The archive is refused whole: its entry ${JSON.stringify(entry)} is ${size} bytes, over the file limit of ${limit} bytes (TOOLGATE_MAX_FILE_BYTES).`,
    { entry, size, limit },
  );
}

/** What the tar reader refused, as the caller's mistake; limits pass through. */
export function malformed(error: unknown): unknown {
  if (!(error instanceof TarFormatError)) return error;
  return new ToolError(
    'invalid_argument',
    `The body is not a tar archive (or a gzip'd one) that can be read: ${error instanceof Error ? error.message : String(error)} Send a tar, or a tar gzip'd.`,
  );
}

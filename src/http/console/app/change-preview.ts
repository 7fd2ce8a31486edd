// What an apply_patch or a write_file would do to the files as they are now: apply_patch's own parser and matcher, run in the browser.
import { fileDiff } from '../../../core/text-diff.ts';
import { applyHunksWithRanges } from '../../../tools/apply-patch/apply-hunks.ts';
import { parsePatch } from '../../../tools/apply-patch/parse-patch.ts';

export interface PreviewFile {
  path: string;
  action: 'add' | 'update' | 'delete' | 'move';
  movedTo?: string;
  /** A unified diff against the current file, or why there is none. */
  diff?: string;
  problem?: string;
}

/** Reads a file's current text, or answers undefined when it is absent. */
export type ReadCurrent = (path: string) => Promise<string | undefined>;

/** One entry per file of the patch; a patch that does not parse throws the tool's own error. */
export async function previewPatch(patch: string, read: ReadCurrent): Promise<PreviewFile[]> {
  const parsed = parsePatch(patch);
  const files: PreviewFile[] = [];
  for (const operation of parsed.operations) {
    const action = operation.kind === 'update' && operation.moveTo !== undefined ? 'move' : operation.kind;
    const entry: PreviewFile = {
      path: operation.path,
      action,
      ...(operation.kind === 'update' && operation.moveTo !== undefined ? { movedTo: operation.moveTo } : {}),
    };
    try {
      const before = await read(operation.path);
      if (operation.kind === 'add') {
        entry.diff = await fileDiff(
          before === undefined ? '/dev/null' : `a/${operation.path}`,
          `b/${operation.path}`,
          before ?? '',
          operation.contents,
        );
      } else if (before === undefined) {
        entry.problem = `${operation.path} does not exist now, so the patch would fail.`;
      } else if (operation.kind === 'delete') {
        entry.diff = await fileDiff(`a/${operation.path}`, '/dev/null', before, '');
      } else {
        const { text, ranges } = await applyHunksWithRanges(operation.path, before, operation.hunks);
        entry.diff = await fileDiff(
          `a/${operation.path}`,
          `b/${operation.moveTo ?? operation.path}`,
          before,
          text,
          ranges,
        );
      }
    } catch (error) {
      entry.problem = error instanceof Error ? error.message : String(error);
    }
    files.push(entry);
  }
  return files;
}

/** A write_file's arguments, as far as the preview needs them. */
export interface WriteArguments {
  path: string;
  content: string;
  mode?: 'create' | 'overwrite' | 'append';
}

/** The one file a write_file would change, as a diff against it now. */
export async function previewWrite(args: WriteArguments, read: ReadCurrent): Promise<PreviewFile[]> {
  const mode = args.mode ?? 'overwrite';
  const before = await read(args.path);
  if (before !== undefined && mode === 'create')
    return [{ path: args.path, action: 'update', problem: `${args.path} exists now, so mode create would fail.` }];
  const after = mode === 'append' ? (before ?? '') + args.content : args.content;
  return [
    {
      path: args.path,
      action: before === undefined ? 'add' : 'update',
      diff: await fileDiff(
        before === undefined ? '/dev/null' : `a/${args.path}`,
        `b/${args.path}`,
        before ?? '',
        after,
      ),
    },
  ];
}

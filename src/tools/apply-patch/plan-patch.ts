// Turns a parsed patch into workspace changes: every path guarded, every hunk located, nothing written.
import { ToolError } from '../../core/errors.ts';
import type { Precondition } from '../../workspace/manifest.ts';
import type { FileChange, Workspace, WorkspacePath } from '../../workspace/workspace.ts';
import { applyHunksWithRanges } from './apply-hunks.ts';
import type { ChangedRange } from '../../core/text-diff.ts';
import type { FileOperation, ParsedPatch } from './patch.ts';
import { WorkBudget } from '../../core/work-budget.ts';

export interface PlannedFile {
  path: string;
  action: 'add' | 'update' | 'delete' | 'move';
  movedTo?: string;
  /** Text before and after (empty for an added or deleted side), for the diff. */
  before: string;
  after: string;
  /** For updates: the lines the hunks changed. */
  ranges?: ChangedRange[];
}

export interface PatchPlan {
  files: PlannedFile[];
  changes: FileChange[];
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

/**
 * Reads what the patch needs and computes every change; throws before anything is written.
 * Locating hunks spends `work`: pass one budget to every plan of one call.
 */
export async function planPatch(
  workspace: Workspace,
  patch: ParsedPatch,
  maxFileBytes: number,
  work: WorkBudget = new WorkBudget(),
): Promise<PatchPlan> {
  const files: PlannedFile[] = [];
  const changes: FileChange[] = [];
  const claimed = new Map<string, string>();
  const claim = (resolved: WorkspacePath, asWritten: string) => {
    const earlier = claimed.get(resolved.path);
    if (earlier !== undefined) {
      throw new ToolError(
        'patch_invalid',
        `${asWritten} and ${earlier} name the same file (${resolved.path}); change each file in one operation.`,
        {
          path: asWritten,
        },
      );
    }
    claimed.set(resolved.path, asWritten);
  };
  const guarded = (content: string, path: string): Uint8Array => {
    const bytes = utf8Encoder.encode(content);
    if (bytes.byteLength > maxFileBytes) {
      throw new ToolError(
        'payload_too_large',
        `${path} would be ${bytes.byteLength} bytes, over the file limit of ${maxFileBytes} bytes.`,
        {
          path,
          limit: maxFileBytes,
        },
      );
    }
    return bytes;
  };

  for (const operation of patch.operations) {
    if (operation.kind === 'add') {
      const target = await workspace.resolve(operation.path, 'write');
      claim(target, operation.path);
      const current = existingFile(target, operation, 'add');
      const before = current ? await readText(workspace, target) : '';
      changes.push({
        op: 'write',
        path: target.path,
        content: guarded(operation.contents, operation.path),
        expect: expectation(target),
      });
      files.push({ path: target.path, action: 'add', before, after: operation.contents });
      continue;
    }
    const source = await workspace.resolve(operation.path, 'write');
    claim(source, operation.path);
    if (!existingFile(source, operation, operation.kind)) {
      throw new ToolError(
        'not_found',
        `${operation.path} does not exist, so it cannot be ${operation.kind === 'delete' ? 'deleted' : 'updated'}; check the path (patch line ${operation.line}).`,
        {
          path: operation.path,
          line: operation.line,
        },
      );
    }
    const before = await readText(workspace, source);
    if (operation.kind === 'delete') {
      changes.push({ op: 'delete', path: source.path, expect: expectation(source) });
      files.push({ path: source.path, action: 'delete', before, after: '' });
      continue;
    }
    const { text: after, ranges } = await applyHunksWithRanges(operation.path, before, operation.hunks, work);
    if (operation.moveTo === undefined) {
      changes.push({
        op: 'write',
        path: source.path,
        content: guarded(after, operation.path),
        expect: expectation(source),
      });
      files.push({ path: source.path, action: 'update', before, after, ranges });
      continue;
    }
    const destination = await workspace.resolve(operation.moveTo, 'write');
    claim(destination, operation.moveTo);
    existingFile(destination, operation, 'move');
    changes.push({
      op: 'write',
      path: destination.path,
      content: guarded(after, operation.moveTo),
      expect: expectation(destination),
    });
    changes.push({ op: 'delete', path: source.path, expect: expectation(source) });
    files.push({ path: source.path, action: 'move', movedTo: destination.path, before, after, ranges });
  }
  return { files, changes };
}

/** True when a file is there; a directory is `is_directory`, whatever the operation. */
function existingFile(
  resolved: WorkspacePath,
  operation: FileOperation,
  as: 'add' | 'update' | 'delete' | 'move',
): boolean {
  const entry = resolved.entry;
  if (entry?.type === 'dir') {
    throw new ToolError(
      'is_directory',
      `${resolved.path} is a directory, so the patch cannot ${as === 'move' ? 'move a file onto' : as} it (patch line ${operation.line}).`,
      {
        path: resolved.path,
        line: operation.line,
      },
    );
  }
  return entry?.type === 'file';
}

/** The state the commit must still find: what was read, or nothing. */
function expectation(resolved: WorkspacePath): Precondition {
  return resolved.entry ? { version: resolved.entry.version } : { absent: true };
}

async function readText(workspace: Workspace, resolved: WorkspacePath): Promise<string> {
  try {
    return utf8Decoder.decode(await workspace.readBytes(resolved.path, resolved.entry!));
  } catch (error) {
    if (error instanceof TypeError) {
      throw new ToolError('binary_file', `${resolved.path} is not UTF-8 text, so apply_patch cannot change it.`, {
        path: resolved.path,
      });
    }
    throw error;
  }
}

// Parses an apply_patch argument in whichever format it came (Codex envelope or unified diff), then checks it as a whole.
import { ToolError } from '../../core/errors.ts';
import { codexPatchSteps, LINES_PER_STEP } from './parse-codex.ts';
import { findHeredoc, invalidPatch, quoteLine, splitPatchLines } from './patch-text.ts';
import { parseUnifiedDiff } from './parse-unified.ts';
import type { FileOperation, ParsedPatch } from './patch.ts';
import { runSteps, runStepsSliced, type WorkBudget } from '../../core/work-budget.ts';

const UNIFIED_STARTS = ['diff --git', '--- ', 'Index:'];

/**
 * The unified diff with a heredoc wrapper blanked out rather than removed, so that jsdiff's line
 * numbers stay the patch's own.
 */
function withoutHeredoc(text: string, heredoc: { opener: number; closer: number | undefined }): string {
  const lines = text.split('\n');
  lines[heredoc.opener] = '';
  if (heredoc.closer !== undefined) lines[heredoc.closer] = '';
  return lines.join('\n');
}

/**
 * A path as a key for spotting two operations on one file: `.` and empty segments dropped. The path
 * guard still validates every path; this only catches the same file spelled twice.
 */
function pathKey(path: string): string {
  return path
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/**
 * Refuses a patch in which one path is the subject of two operations (two updates of a file, an
 * update moving onto a path another operation adds, a delete and an add of one path). Applying such
 * patches would depend on the order of operations; refusing them is simple and safe, and the model
 * can always say the same thing in one operation per file.
 */
function refuseRepeatedPaths(operations: readonly FileOperation[]): void {
  const seen = new Map<string, { line: number; path: string }>();
  for (const operation of operations) {
    const paths = [operation.path];
    if (
      operation.kind === 'update' &&
      operation.moveTo !== undefined &&
      pathKey(operation.moveTo) !== pathKey(operation.path)
    ) {
      paths.push(operation.moveTo);
    }
    for (const path of paths) {
      const key = pathKey(path);
      const first = seen.get(key);
      if (first !== undefined) {
        const message = `line ${operation.line}: ${quoteLine(path)} is already the subject of the operation on line ${first.line}; change each file in one operation only`;
        throw new ToolError('patch_invalid', message, { line: operation.line, firstLine: first.line, path });
      }
      seen.set(key, { line: operation.line, path });
    }
  }
}

/**
 * Parses a patch: the Codex envelope when its first non-blank line (after an optional heredoc
 * opener) is `*** Begin Patch`, a unified diff when it starts with `diff --git`, `--- ` or `Index:`.
 * Every error is patch_invalid with the 1-based patch line in `details.line`.
 */
export function parsePatch(text: string): ParsedPatch {
  return runSteps(patchSteps(text));
}

/** Parse work of one step (LINES_PER_STEP lines), in the units of WorkBudget. */
const STEP_COST = LINES_PER_STEP * 100;

/**
 * As parsePatch, letting the event loop run every few milliseconds as `clock` says while it parses
 * a Codex envelope (a unified diff is parsed by jsdiff in one go).
 */
export function parsePatchSliced(text: string, clock: WorkBudget): Promise<ParsedPatch> {
  return runStepsSliced(patchSteps(text), clock, STEP_COST);
}

function* patchSteps(text: string): Generator<void, ParsedPatch, void> {
  const lines = splitPatchLines(text);
  const heredoc = findHeredoc(lines);
  let first = heredoc === undefined ? 0 : heredoc.opener + 1;
  while (first < lines.length && lines[first]!.trim() === '') first += 1;
  const opening = lines[first] ?? '';
  let parsed: ParsedPatch;
  if (opening.trim() === '*** Begin Patch') {
    parsed = yield* codexPatchSteps(lines);
  } else if (UNIFIED_STARTS.some((start) => opening.startsWith(start))) {
    yield;
    parsed = parseUnifiedDiff(heredoc === undefined ? text : withoutHeredoc(text, heredoc));
  } else {
    const got = first < lines.length ? `got ${quoteLine(opening)}` : 'the patch is empty';
    throw invalidPatch(
      first < lines.length ? first + 1 : 1,
      `a patch must start with '*** Begin Patch' or be a unified diff starting with 'diff --git', '--- ' or 'Index:'; ${got}`,
    );
  }
  yield;
  refuseRepeatedPaths(parsed.operations);
  return parsed;
}

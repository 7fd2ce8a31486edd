// apply_patch: a Codex envelope or a unified diff, checked whole and committed atomically.
import { applyPatchInput } from '../../contract/tool-inputs.ts';
import { ToolError } from '../../core/errors.ts';
import { defineTool } from '../tool.ts';
import { DiffBudget, fileDiff } from '../../core/text-diff.ts';
import { parsePatchSliced } from './parse-patch.ts';
import { planPatch, type PlannedFile } from './plan-patch.ts';
import { unlimitedWork, WorkBudget } from '../../core/work-budget.ts';

/** Attempts when another writer changes a patched file between our read and our commit. */
const MAX_ATTEMPTS = 8;

export const applyPatch = defineTool({
  name: 'apply_patch',
  description:
    'Apply a patch to files in the workspace: add, update (with optional move) and delete files. All or nothing: if any ' +
    'hunk of any file does not match, no file changes and the error names the file, the hunk and the lines not found.',
  input: applyPatchInput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async execute(args, { workspace, limits, recordEffect }) {
    // Parsing and the answer's diffs are bounded by the patch and the files, not by the budget;
    // they let the event loop run as they go too.
    const clock = unlimitedWork();
    const patch = await parsePatchSliced(args.patch, clock);
    // One budget for every attempt: a call that plans again after losing a race does not start afresh.
    const work = new WorkBudget();
    for (let attempt = 1; ; attempt += 1) {
      const plan = await planPatch(workspace, patch, limits.maxFileBytes, work);
      const diffBudget = new DiffBudget();
      const files = [];
      for (const file of plan.files) files.push(await describeFile(file, diffBudget, clock));
      const result = {
        files,
        summary: summarise(plan.files),
        dryRun: args.dryRun === true,
      };
      if (args.dryRun) return result;
      try {
        await workspace.commit(plan.changes, recordEffect);
        return result;
      } catch (error) {
        // A file changed after we read it: plan again against what is there now.
        const lostRace = error instanceof ToolError && (error.code === 'conflict' || error.code === 'already_exists');
        if (!lostRace || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  },
});

async function describeFile(
  file: PlannedFile,
  budget: DiffBudget,
  clock: WorkBudget,
): Promise<{
  path: string;
  action: PlannedFile['action'];
  movedTo?: string;
  diff: string;
}> {
  const oldName = file.action === 'add' && file.before === '' ? '/dev/null' : `a/${file.path}`;
  const newName = file.action === 'delete' ? '/dev/null' : `b/${file.movedTo ?? file.path}`;
  const diff = await fileDiff(oldName, newName, file.before, file.after, file.ranges, budget, clock);
  return file.movedTo === undefined
    ? { path: file.path, action: file.action, diff }
    : { path: file.path, action: file.action, movedTo: file.movedTo, diff };
}

/** `A path` lines, then `M path` (a move names its target), then `D path`. */
function summarise(files: readonly PlannedFile[]): string {
  const added = files.filter((file) => file.action === 'add').map((file) => `A ${file.path}`);
  const modified = files
    .filter((file) => file.action === 'update' || file.action === 'move')
    .map((file) => `M ${file.movedTo ?? file.path}`);
  const deleted = files.filter((file) => file.action === 'delete').map((file) => `D ${file.path}`);
  return [...added, ...modified, ...deleted].join('\n');
}

// bash: run commands (exec waits, on the edge engine or a runner; start returns, on a runner), then status, logs, stdin, stop and list.
import type { z } from 'zod';
import type { BashExecResult } from '../contract/tool-answers.ts';
import { bashActions, bashInput, type BashAction as Action } from '../contract/tool-inputs.ts';
import { ToolError } from '../core/errors.ts';
import { snapshotOf } from '../processes/process-record.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { EdgeEngine } from './edge-bash/edge-interpreter.ts';
import { defineTool, type ProcessLauncher, type ProcessUse, type ToolLimits } from './tool.ts';

type Input = z.output<typeof bashInput>;

/** The arguments each action takes; any other is refused, so a misplaced argument reaches the agent. */
const accepted: Record<Action, { required: (keyof Input)[]; optional: (keyof Input)[] }> = {
  exec: { required: ['command'], optional: ['cwd', 'timeoutMs', 'env', 'engine'] },
  start: { required: ['command'], optional: ['cwd', 'env', 'tty', 'cols', 'rows'] },
  status: { required: ['processId'], optional: [] },
  logs: { required: ['processId'], optional: ['offset', 'limit'] },
  write: { required: ['processId', 'input'], optional: ['eof'] },
  stop: { required: ['processId'], optional: ['graceMs'] },
  list: { required: [], optional: [] },
};

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_GRACE_MS = 5_000;
const DEFAULT_TERMINAL = { cols: 120, rows: 40 };
/** exec waits this much beyond its timeout for the runner to kill the command and sync its files. */
const EXEC_SETTLE_MS = 30_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The edge engine's modules, loaded on the first exec (a server that runs none never loads them). */
let edgeModules: Promise<[typeof import('./edge-bash/edge-interpreter.ts'), typeof import('./edge-bash/edge-run.ts')]>;
const loadEdge = () =>
  (edgeModules ??= Promise.all([import('./edge-bash/edge-interpreter.ts'), import('./edge-bash/edge-run.ts')]));

export const bash = defineTool({
  name: 'bash',
  description:
    'Run bash commands in the workspace. action "exec" runs a command and waits for it (stdout, stderr, exitCode): ' +
    'everyday commands (cat, grep, sed, head, wc, jq, ...) are answered at once by the edge engine, the rest on a sandboxed runner ' +
    '(engine "auto"; "edge" or "runner" to choose); "start" runs one in the background and returns its processId; "status", "logs" (offset paging), "write" (stdin), ' +
    '"stop" (SIGTERM, then SIGKILL after graceMs) and "list" manage background processes. Files the command changes are ' +
    'visible to read_file when it ends.',
  input: bashInput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  actions: {
    names: bashActions,
    of: (args) => args.action,
    readOnly: ['status', 'logs', 'list'],
    usingProcessTime: ['exec', 'start'],
    processUse,
  },
  check: checkArguments,
  async execute(args, { workspace, processes, recordEffect, limits, edgeEngine }) {
    checkArguments(args);
    if (args.action === 'exec' && args.engine !== 'runner') {
      edgeEngine ??= (await loadEdge())[0].handlerEdgeEngine;
      // On auto, a command off the edge's allow-list, or one the interpreter cannot finish within
      // its own limits, goes on to a runner.
      const answer = await execOnEdge(args, workspace, limits, recordEffect, edgeEngine);
      if (answer !== undefined) return answer;
    }
    if (!processes)
      throw new ToolError('unavailable', 'bash is not available on this server; retry later or ask its operator.');
    switch (args.action) {
      case 'exec':
        return exec(args, workspace, processes, recordEffect);
      case 'start': {
        const record = processes.create(await newProcess(args, workspace, 'start'), recordEffect);
        return snapshotOf(record);
      }
      case 'status': {
        // Beyond the snapshot: why it failed or was lost, and files its sync-back left to the API's version.
        const record = owned(processes, workspace, args.processId!);
        return { ...snapshotOf(record), error: record.error, conflicts: record.conflicts };
      }
      case 'logs':
        owned(processes, workspace, args.processId!);
        return processes.readLogs(workspace.id, args.processId!, args.offset, args.limit);
      case 'write':
        owned(processes, workspace, args.processId!);
        return {
          processId: args.processId!,
          bytesWritten: processes.writeStdin(workspace.id, args.processId!, args.input!, args.eof ?? false),
        };
      case 'stop':
        owned(processes, workspace, args.processId!);
        return snapshotOf(processes.requestStop(workspace.id, args.processId!, args.graceMs ?? DEFAULT_GRACE_MS));
      case 'list':
        return { processes: processes.list(workspace.id).map(snapshotOf) };
    }
  },
});

function checkArguments(args: Input): void {
  const rule = accepted[args.action];
  const given = (Object.keys(args) as (keyof Input)[]).filter((key) => key !== 'action' && args[key] !== undefined);
  const extra = given.filter((key) => !rule.required.includes(key) && !rule.optional.includes(key));
  const missing = rule.required.filter((key) => args[key] === undefined);
  if (extra.length > 0 || missing.length > 0) {
    const parts = [
      missing.length > 0 ? `needs ${missing.join(', ')}` : '',
      extra.length > 0 ? `does not take ${extra.join(', ')}` : '',
    ].filter(Boolean);
    throw new ToolError('invalid_argument', `bash action "${args.action}" ${parts.join(' and ')}.`, {
      action: args.action,
      missing,
      unexpected: extra,
    });
  }
  if (args.tty !== true && (args.cols !== undefined || args.rows !== undefined)) {
    const given = (['cols', 'rows'] as const).filter((key) => args[key] !== undefined);
    throw new ToolError(
      'invalid_argument',
      `bash ${given.join(' and ')} size a terminal; pass tty: true with them, or leave them out.`,
      { unexpected: given },
    );
  }
  for (const name of Object.keys(args.env ?? {})) {
    if (!ENV_NAME.test(name))
      throw new ToolError('invalid_argument', `env name ${JSON.stringify(name)} is not a valid variable name.`, {
        env: name,
      });
  }
}

async function newProcess(args: Input, workspace: Workspace, mode: 'exec' | 'start') {
  const cwd = await workspace.resolve(args.cwd ?? '', 'read', { directory: true });
  if (cwd.readOnlyRoot !== undefined)
    throw new ToolError(
      'path_denied',
      `cwd ${args.cwd} is inside a read-only root; run commands in the workspace itself.`,
      { path: args.cwd },
    );
  if (cwd.entry?.type !== 'dir') {
    throw new ToolError(
      cwd.entry ? 'invalid_argument' : 'not_found',
      `cwd ${JSON.stringify(args.cwd)} is not a directory of the workspace.`,
      { path: args.cwd },
    );
  }
  const terminal =
    args.tty === true ? { cols: args.cols ?? DEFAULT_TERMINAL.cols, rows: args.rows ?? DEFAULT_TERMINAL.rows } : null;
  return {
    workspace: workspace.id,
    command: args.command!,
    cwd: cwd.path,
    env: args.env ?? {},
    mode,
    timeoutMs: mode === 'exec' ? (args.timeoutMs ?? DEFAULT_TIMEOUT_MS) : null,
    terminal,
  };
}

async function exec(
  args: Input,
  workspace: Workspace,
  processes: ProcessLauncher,
  recordEffect: (() => void) | undefined,
) {
  const created = processes.create(await newProcess(args, workspace, 'exec'), recordEffect);
  const timeoutMs = created.timeoutMs!;
  let record = await processes.waitForEnd(workspace.id, created.id, timeoutMs);
  if (record.status === 'queued') {
    processes.requestStop(workspace.id, created.id, 0);
    throw new ToolError(
      'unavailable',
      `No runner picked up the command within ${timeoutMs} ms; no runner may be connected. Retry later.`,
      { processId: created.id },
    );
  }
  if (record.status === 'running')
    record = await processes.waitForEnd(workspace.id, created.id, timeoutMs + EXEC_SETTLE_MS);
  if (record.status === 'running') {
    processes.requestStop(workspace.id, created.id, 0);
    throw new ToolError('timeout', `The runner did not finish the command within ${timeoutMs + EXEC_SETTLE_MS} ms.`, {
      processId: created.id,
    });
  }
  if (record.status === 'lost' || record.status === 'failed') {
    throw new ToolError('unavailable', `The command could not complete: ${record.error ?? record.status}. Retry it.`, {
      processId: created.id,
      status: record.status,
    });
  }
  const result = processes.execResult(created.id) ?? { stdout: '', stderr: '', truncated: false };
  const durationMs = record.startedAt && record.endedAt ? Date.parse(record.endedAt) - Date.parse(record.startedAt) : 0;
  // Beyond docs/api.md's fields, only when there is something to say: files the command changed that
  // were left to a version written through the API meanwhile, and why some were not synced.
  return {
    exitCode: record.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: record.timedOut,
    durationMs,
    truncated: result.truncated,
    engine: 'runner',
    ...(record.conflicts.length > 0 ? { conflicts: record.conflicts } : {}),
    ...(record.error ? { error: record.error } : {}),
  } satisfies BashExecResult;
}

/**
 * exec in the handler, where the edge takes the command (edge-interpreter.ts engineFor): the same
 * answer as a runner's, its changes committed with the call's usage record; undefined on auto for
 * a command a runner should run.
 */
async function execOnEdge(
  args: Input,
  workspace: Workspace,
  limits: ToolLimits,
  recordEffect: (() => void) | undefined,
  engine: EdgeEngine,
) {
  const requested = args.engine === 'edge' ? 'edge' : 'auto';
  const { cwd } = await newProcess(args, workspace, 'exec');
  const started = performance.now();
  const [, { runOnEdge }] = await loadEdge();
  const outcome = await runOnEdge(
    workspace,
    {
      command: args.command!,
      cwd,
      env: args.env ?? {},
      timeoutMs: args.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxFileBytes: limits.maxFileBytes,
      maxWorkspaceBytes: limits.edgeMemoryBytes,
      onCommit: recordEffect,
      orRunner: requested === 'auto',
      requested,
      // Asked of the manifest (one row at most), not by listing it: the run lists it once, if it runs.
      workspace: { links: requested === 'auto' && workspace.holdsLinks() },
    },
    engine,
  );
  if (outcome === undefined) return undefined;
  const { conflicts, skipped } = outcome.sync;
  return {
    exitCode: outcome.exitCode,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    timedOut: outcome.timedOut,
    durationMs: Math.round(performance.now() - started),
    truncated: outcome.truncated,
    engine: 'edge',
    ...(conflicts.length > 0 ? { conflicts } : {}),
    // Worded as a runner words what it could not sync.
    ...(skipped.length > 0
      ? { error: `not synced: ${skipped.map((entry) => `${entry.path} (${entry.reason})`).join('; ')}` }
      : {}),
  } satisfies BashExecResult;
}

/** An exec's run time counts at once; a started process's when it ends. */
function processUse(action: string, result: unknown): ProcessUse {
  const value = result as { durationMs?: unknown; processId?: unknown };
  if (action === 'exec' && typeof value.durationMs === 'number') return { processSeconds: value.durationMs / 1000 };
  if (action === 'start' && typeof value.processId === 'string') return { processId: value.processId };
  return {};
}

function owned(processes: ProcessLauncher, workspace: Workspace, processId: string) {
  const record = processes.get(workspace.id, processId);
  if (!record)
    throw new ToolError(
      'not_found',
      `Process ${processId} does not exist in workspace ${workspace.id}; list processes with action "list".`,
      { processId },
    );
  return record;
}

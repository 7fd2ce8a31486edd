// Runs an admitted tool call: the tool with its context, the home's step after it, and the outcome
// its one usage record is closed with (its answer's bytes, process use, whether its effect landed).
import type { Approval } from '../approvals/approval-store.ts';
import { byteLength, errorAnswer, jsonAnswer, type CallAnswer } from '../core/call-answer.ts';
import { INTERNAL_MESSAGE, isToolError } from '../core/errors.ts';
import type { Log } from '../core/log.ts';
import type { CallIdentity, CallOutcome, UsageMeter } from '../metering/usage-meter.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { EdgeEngine } from '../tools/edge-bash/edge-interpreter.ts';
import type { SearchThreads } from '../tools/search/text-search.ts';
import type { ToolDefinition, ToolLimits } from '../tools/tool.ts';
import type { Workspace } from '../workspace/workspace.ts';

/** What a call is run with: the tools' context, the meter its effect is recorded in, the step after it. */
export interface CallExecution {
  meter: UsageMeter;
  limits: ToolLimits;
  processes?: ProcessStore;
  /** Where grep searches files with very long lines off the event loop (the Node home); see ToolContext. */
  searchThreads?: SearchThreads;
  /** Where bash's edge engine runs commands off the event loop (the Node home); see ToolContext. */
  edgeEngine?: EdgeEngine;
  /** Runs after a call's effect landed, before it answers (an automatic checkpoint); a failure is logged, never the call's. */
  afterCall?: (call: { tool: string; args: unknown; workspace: Workspace; result: unknown }) => Promise<void>;
}

export interface Executed {
  answer: CallAnswer;
  outcome: CallOutcome;
  /** Set when the call ran without a record ahead: its effect's transaction may have written one under this key. */
  effectKey?: string;
  /** Whether the call's effect reached a transaction (which then held its record). */
  effected?: boolean;
  result?: unknown;
  error?: NonNullable<Approval['error']>;
}

/** Executes an admitted call; the outcome is for its usage record, which the caller closes. */
export async function executeCall(
  execution: CallExecution & { now: () => number; log: Log },
  identity: CallIdentity,
  tool: ToolDefinition,
  args: unknown,
  workspace: Workspace,
  usageId: number | undefined,
): Promise<Executed> {
  const { meter, limits, processes, searchThreads, edgeEngine, now, log } = execution;
  const started = now();
  // Without a record ahead, the effect's transaction writes one, found again by this key.
  const effectKey = usageId === undefined ? crypto.randomUUID() : undefined;
  let effected = false;
  const recordEffect = () => {
    effected = true;
    if (usageId === undefined) meter.recordEffect(identity, effectKey!);
    else meter.markEffect(usageId);
  };
  try {
    const result = await tool.execute(args, {
      workspace,
      limits,
      processes,
      searchThreads,
      edgeEngine,
      recordEffect,
    });
    await execution
      .afterCall?.({ tool: identity.tool, args, workspace, result })
      .catch((error: unknown) => log(`after ${identity.tool} in ${workspace.id}`, error));
    const answer = jsonAnswer(200, { result });
    const used = identity.action !== undefined && tool.actions ? tool.actions.processUse(identity.action, result) : {};
    const outcome: CallOutcome = {
      outcome: 'ok',
      bytesOut: byteLength(answer.json),
      durationMs: now() - started,
      ...used,
    };
    return { answer, outcome, result, effectKey, effected };
  } catch (error) {
    const answer = failureAnswer(error, log);
    const outcome: CallOutcome = {
      outcome: outcomeOf(error),
      bytesOut: byteLength(answer.json),
      durationMs: now() - started,
    };
    const failure = isToolError(error)
      ? {
          code: error.code,
          message: error.message,
          ...(error.details === undefined ? {} : { details: error.details }),
        }
      : { code: 'internal' as const, message: INTERNAL_MESSAGE };
    return { answer, outcome, error: failure, effectKey, effected };
  }
}

/** The answer to a call that failed; a failure that is no ToolError is logged, since its answer hides it. */
export function failureAnswer(error: unknown, log: Log): CallAnswer {
  if (!isToolError(error)) log('internal error in a tool call', error);
  return errorAnswer(error);
}

/** The outcome a failed call's usage record names: its error code. */
export function outcomeOf(error: unknown): string {
  return isToolError(error) ? error.code : 'internal';
}

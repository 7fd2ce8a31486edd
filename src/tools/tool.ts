// The shape of a tool: a name, a zod input schema (the single source of truth) and execute.
import type { z } from 'zod';
import type { ToolAnnotations } from '../contract/tool-answers.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { EdgeEngine } from './edge-bash/edge-interpreter.ts';
import type { SearchThreads } from './search/text-search.ts';
import type { Workspace } from '../workspace/workspace.ts';

export interface ToolLimits {
  /** read_file's maxChars when the call gives none. */
  defaultReadMaxChars: number;
  /** The largest file a write may leave behind, in bytes. */
  maxFileBytes: number;
  /** The most file contents one edge command may hold in memory, in bytes (TOOLGATE_EDGE_MEMORY_BYTES). */
  edgeMemoryBytes: number;
}

/** What a tool may do with durable processes: run, watch, feed and stop them (not lease or report, the runner's part). */
export type ProcessLauncher = Pick<
  ProcessStore,
  'create' | 'get' | 'list' | 'waitForEnd' | 'execResult' | 'readLogs' | 'writeStdin' | 'requestStop'
>;

export interface ToolContext {
  workspace: Workspace;
  limits: ToolLimits;
  /** Durable processes; bash answers `unavailable` without them. */
  processes?: ProcessLauncher;
  /**
   * Where grep searches a file with a very long line, off the event loop (the Node home's worker
   * threads); without them it searches in the handler (the Cloudflare home: the workspace's own object).
   */
  searchThreads?: SearchThreads;
  /**
   * Where bash's edge engine reads and runs commands off the event loop (the Node home's worker
   * threads); without it, in the handler (the Cloudflare home: the workspace's own object).
   */
  edgeEngine?: EdgeEngine;
  /** Runs inside the transaction that commits the call's effect (a workspace commit, a new process). */

  recordEffect?: () => void;
}

/** The process time a call used: an exec's run time at once, or the started process whose run time counts when it ends. */
export interface ProcessUse {
  processSeconds?: number;
  processId?: string;
}

/**
 * A tool whose calls each name one of several actions (bash): allowlist entries and rules say
 * `tool:action`, usage records keep the action, and the gate asks the tool, never its name.
 */
export interface ToolActions<Input = unknown> {
  names: readonly string[];
  /** The action a call names. */
  of(input: Input): string;
  /** Actions that only read: the `safe` approval mode runs them unasked. */
  readOnly: readonly string[];
  /** Actions whose calls use process time, so a spent processSeconds quota refuses them. */
  usingProcessTime: readonly string[];
  /** What process time a call of `action` used, read from its result. */
  processUse(action: string, result: unknown): ProcessUse;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Schema;
  annotations: ToolAnnotations;
  /** Set for a tool with actions; see ToolActions. */
  actions?: ToolActions<z.output<Schema>>;
  /** Checks beyond the schema (arguments that depend on each other); throws `invalid_argument`. */
  check?(input: z.output<Schema>): void;
  execute(input: z.output<Schema>, context: ToolContext): Promise<unknown>;
}

/** Keeps the schema's type attached to execute while the registry holds tools of any schema. */
export function defineTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

// The shape of a tool: a name, a zod input schema (the single source of truth) and execute.
import type { z } from 'zod';
import type { ProcessStore } from '../processes/process-store.ts';
import type { Workspace } from '../workspace/workspace.ts';

export interface ToolLimits {
  /** read_file's maxChars when the call gives none. */
  defaultReadMaxChars: number;
  /** The largest file a write may leave behind, in bytes. */
  maxFileBytes: number;
}

export interface ToolContext {
  workspace: Workspace;
  limits: ToolLimits;
  /** Durable bash processes; bash answers `unavailable` without them. */
  processes?: ProcessStore;
  /** Runs inside the transaction that commits the call's effect (a workspace commit, a new process). */
  recordEffect?: () => void;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint?: boolean;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Schema;
  annotations: ToolAnnotations;
  /** Checks beyond the schema (arguments that depend on each other); throws `invalid_argument`. */
  check?(input: z.output<Schema>): void;
  execute(input: z.output<Schema>, context: ToolContext): Promise<unknown>;
}

/** Keeps the schema's type attached to execute while the registry holds tools of any schema. */
export function defineTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

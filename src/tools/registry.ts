// The tool registry: looks a tool up, parses its arguments strictly, and runs it.
import type { z } from 'zod';
import { ToolError } from '../core/errors.ts';
import type { ToolContext, ToolDefinition } from './tool.ts';

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(tools: readonly ToolDefinition[]) {
    for (const tool of tools) this.tools.set(tool.name, tool);
  }

  list(): ToolDefinition[] {
    return [...this.tools.values()];
  }

  get(name: string): ToolDefinition {
    const tool = this.tools.get(name);
    if (!tool) {
      throw new ToolError('not_found', `There is no tool named ${JSON.stringify(name)}; use one of ${[...this.tools.keys()].join(', ')}.`, {
        tool: name,
      });
    }
    return tool;
  }

  /** Validates `args` against the tool's schema (unknown fields are errors) and its own checks. */
  parse(name: string, args: unknown): unknown {
    const tool = this.get(name);
    const input = parseInput(tool.input, args, `arguments for ${tool.name}`);
    tool.check?.(input);
    return input;
  }

  /** Validates `args`, then executes the tool. */
  async call(name: string, args: unknown, context: ToolContext): Promise<unknown> {
    return this.get(name).execute(this.parse(name, args), context);
  }
}

/** Parses `value` with a zod schema; a violation is `invalid_argument` naming every bad field. */
export function parseInput<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(describeIssue);
  throw new ToolError('invalid_argument', `Invalid ${what}: ${issues.map((issue) => issue.message).join('; ')}.`, { issues });
}

function describeIssue(issue: z.core.$ZodIssue): { path: string; message: string } {
  const field = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => JSON.stringify(key)).join(', ');
    return { path: field, message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}${field ? ` in ${field}` : ''}` };
  }
  return { path: field, message: field ? `${field}: ${issue.message}` : issue.message };
}

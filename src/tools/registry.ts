// The tool registry: looks a tool up, parses its arguments strictly, and runs it.
import { parseInput } from '../contract/parse-input.ts';
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
      throw new ToolError(
        'not_found',
        `There is no tool named ${JSON.stringify(name)}; use one of ${[...this.tools.keys()].join(', ')}.`,
        {
          tool: name,
        },
      );
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

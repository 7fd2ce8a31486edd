// Tool definitions in each ecosystem's function-calling shape, generated from the zod schemas.
import { z } from 'zod';
import { ToolError } from '../core/errors.ts';
import { toolFormats, type ToolDefinitions, type ToolFormat } from '../contract/tool-answers.ts';
import type { ToolDefinition } from './tool.ts';

/** The JSON Schema (draft 2020-12) of a tool's input, as a caller sends it. */
export function inputJsonSchema(tool: ToolDefinition): Record<string, unknown> {
  return z.toJSONSchema(tool.input, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
}

export function formatTools(
  tools: readonly ToolDefinition[],
  format: string,
): { tools: ToolDefinitions[ToolFormat][] } {
  if (!(toolFormats as readonly string[]).includes(format)) {
    throw new ToolError(
      'invalid_argument',
      `Unknown format ${JSON.stringify(format)}; use one of ${toolFormats.join(', ')}.`,
      { format },
    );
  }
  return { tools: tools.map((tool) => formatTool(tool, format as ToolFormat)) };
}

function formatTool(tool: ToolDefinition, format: ToolFormat): ToolDefinitions[ToolFormat] {
  const schema = inputJsonSchema(tool);
  const { $schema: _dialect, ...parameters } = schema;
  switch (format) {
    case 'jsonschema':
      return { name: tool.name, description: tool.description, inputSchema: schema };
    case 'openai':
      return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
    case 'anthropic':
      return { name: tool.name, description: tool.description, input_schema: parameters };
    case 'mcp':
      return { name: tool.name, description: tool.description, inputSchema: parameters, annotations: tool.annotations };
  }
}

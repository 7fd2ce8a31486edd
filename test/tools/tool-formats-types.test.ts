// GET /v1/tools?format=openai|anthropic|mcp answers type-check against the official SDKs' request types, as
// they are: the answers are written into a TypeScript source that the compiler checks with the SDKs installed.
import { fileURLToPath } from 'node:url';
import { ListToolsResultSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../support/server-process.ts';

const server = useServer();
const answers: Record<string, unknown[]> = {};

beforeAll(async () => {
  for (const format of ['openai', 'anthropic', 'mcp']) {
    const answer = await server.call('GET', `/v1/tools?format=${format}`);
    expect(answer.status).toBe(200);
    answers[format] = answer.body.tools;
  }
});

/** The source is never written: it exists for the compiler beside this file, so the SDKs resolve from the project's node_modules. */
const checkedFile = fileURLToPath(new URL('./tool-formats-check.ts', import.meta.url));
const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts'],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
};

/** The compiler's diagnostics for `source`, each as "<the declaration it is in>: <message>". */
function typeErrors(source: string): string[] {
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    name === checkedFile
      ? ts.createSourceFile(name, source, language)
      : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => name === checkedFile || fileExists.call(host, name);
  host.readFile = (name) => (name === checkedFile ? source : readFile.call(host, name));
  const program = ts.createProgram([checkedFile], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const declaration =
      [...source.slice(0, diagnostic.start ?? 0).matchAll(/export const (\w+)/g)].at(-1)?.[1] ?? '(top)';
    return `${declaration}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

/** A source that hands the tools to each SDK's request: as the tool type, and as the `tools` of a real request. */
function sdkRequests(tools: { openai: unknown; anthropic: unknown; mcp: unknown }): string {
  const literal = (value: unknown) => JSON.stringify(value, null, 2);
  return `import type OpenAI from 'openai';
import type Anthropic from '@anthropic-ai/sdk';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';

export const openaiTools: OpenAI.Chat.Completions.ChatCompletionTool[] = ${literal(tools.openai)};
export const openaiRequest: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], tools: ${literal(tools.openai)} };

export const anthropicTools: Anthropic.Messages.Tool[] = ${literal(tools.anthropic)};
export const anthropicRequest: Anthropic.Messages.MessageCreateParamsNonStreaming = { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], tools: ${literal(tools.anthropic)} };

export const mcpTools: McpTool[] = ${literal(tools.mcp)};
`;
}

describe('GET /v1/tools in the function-calling formats', () => {
  it("type-checks against openai's, @anthropic-ai/sdk's and the MCP SDK's request types", () => {
    expect(answers.openai!.map((tool) => (tool as { function: { name: string } }).function.name)).toEqual([
      'read_file',
      'write_file',
      'apply_patch',
      'bash',
      'grep',
      'glob',
    ]);
    expect(typeErrors(sdkRequests({ openai: answers.openai, anthropic: answers.anthropic, mcp: answers.mcp }))).toEqual(
      [],
    );
  });

  it('and the check fails for a shape the SDKs do not accept', () => {
    // Each format handed to the other SDK: OpenAI's wrapper is no Anthropic tool, Anthropic's input_schema no OpenAI one.
    const swapped = typeErrors(
      sdkRequests({ openai: answers.anthropic, anthropic: answers.openai, mcp: answers.anthropic }),
    );
    const refused = new Set(swapped.map((error) => error.slice(0, error.indexOf(':'))));
    expect([...refused].sort()).toEqual([
      'anthropicRequest',
      'anthropicTools',
      'mcpTools',
      'openaiRequest',
      'openaiTools',
    ]);
    // A subtler slip: a JSON Schema whose type is not "object" is no Anthropic input_schema.
    const notObject = structuredClone(answers.anthropic) as { input_schema: { type: string } }[];
    notObject[0]!.input_schema.type = 'array';
    expect(
      typeErrors(sdkRequests({ openai: answers.openai, anthropic: notObject, mcp: answers.mcp })).join('\n'),
    ).toMatch(/^anthropicTools: .*"array"/m);
  });

  it("format=mcp parses with the MCP SDK's own ToolSchema, keeping every field", () => {
    for (const tool of answers.mcp!) expect(ToolSchema.parse(tool)).toEqual(tool);
    expect(ListToolsResultSchema.parse({ tools: answers.mcp }).tools.map((tool) => tool.name)).toEqual([
      'read_file',
      'write_file',
      'apply_patch',
      'bash',
      'grep',
      'glob',
    ]);
    expect(ToolSchema.safeParse(answers.openai![0]).success).toBe(false);
  });
});

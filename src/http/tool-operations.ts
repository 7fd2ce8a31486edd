// The tool routes as the OpenAPI document lists them: the tool list, a call per tool, and MCP over the same tools.
import { MAX_WAIT_MS } from '../approvals/approval-flow.ts';
import { toolFormats, toolResultSchemas } from '../contract/tool-answers.ts';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import { inputJsonSchema } from '../tools/tool-formats.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { callErrors, ref, type Operation, type Parameter } from './openapi-types.ts';

const pathErrors: ErrorCode[] = ['path_outside_workspace', 'symlink_loop', 'is_directory'];
/** The further errors of each built-in tool; a tool not named here is documented with every code. */
const toolErrors: Record<string, ErrorCode[]> = {
  read_file: [...pathErrors, 'binary_file'],
  write_file: [...pathErrors, 'path_denied', 'already_exists', 'conflict'],
  apply_patch: [...pathErrors, 'path_denied', 'binary_file', 'conflict', 'patch_invalid', 'patch_conflict'],
  bash: ['path_outside_workspace', 'symlink_loop', 'path_denied', 'conflict', 'timeout'],
  grep: ['path_outside_workspace', 'symlink_loop'],
  glob: ['path_outside_workspace', 'symlink_loop'],
};

const waitMs: Parameter = {
  name: 'waitMs',
  description: 'When the call needs approval, wait up to this long for the decision before answering 202.',
  schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS },
};

/** The component name of a tool's result schema: read_file -> ReadFileResult. */
export function resultName(tool: ToolDefinition): string {
  return `${tool.name.replace(/(^|_)(\w)/g, (_, _sep: string, letter: string) => letter.toUpperCase())}Result`;
}

export function toolOperations(tools: readonly ToolDefinition[]): Operation[] {
  const list: Operation = {
    method: 'get',
    path: '/v1/tools',
    tag: 'tools',
    operationId: 'listTools',
    summary: 'List the tools in a function-calling format',
    query: [
      {
        name: 'format',
        description: 'The ecosystem whose shape to answer in (default jsonschema).',
        schema: { type: 'string', enum: [...toolFormats] },
      },
    ],
    answers: { 200: { description: 'The tools.', schema: 'ToolList' } },
    errors: ['invalid_argument'],
  };
  return [
    list,
    ...tools.map((tool): Operation => {
      const result = toolResultSchemas[tool.name] ? ref(resultName(tool)) : { type: 'object' };
      return {
        method: 'post',
        path: `/v1/workspaces/{ws}/tools/${tool.name}`,
        tag: 'tools',
        operationId: `call${resultName(tool).replace(/Result$/, '')}`,
        summary: `Call ${tool.name}`,
        description: tool.description,
        query: [waitMs],
        body: { content: { 'application/json': inputJsonSchema(tool) }, required: true },
        answers: {
          200: {
            description: 'The tool ran.',
            schema: { type: 'object', properties: { result }, required: ['result'] },
          },
          202: { description: 'The call waits for approval.', schema: 'ApprovalPending' },
        },
        errors: [...callErrors, ...(toolErrors[tool.name] ?? (Object.keys(errorStatus) as ErrorCode[]))],
      };
    }),
  ];
}

export function mcpOperation(): Operation {
  return {
    method: 'post',
    path: '/v1/workspaces/{ws}/mcp',
    tag: 'mcp',
    operationId: 'mcp',
    summary: 'Model Context Protocol (Streamable HTTP, stateless) offering the same tools',
    description:
      "Connect an MCP client (for example the SDK's StreamableHTTPClientTransport) with the same Bearer key. A failed tool call is a result " +
      'with isError: true whose text starts with the error code. Protocol errors are JSON-RPC error answers; other methods than POST answer 405.',
    query: [waitMs],
    body: { content: { 'application/json': ref('JsonRpcMessage') }, required: true },
    answers: {
      200: { description: 'The JSON-RPC answer.', schema: 'JsonRpcMessage' },
      202: { description: 'A notification or answer was accepted.' },
    },
    errors: ['invalid_argument', 'forbidden', 'payload_too_large'],
  };
}

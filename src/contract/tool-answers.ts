// What the tools answer, declared once: each built-in tool's `result` (by bash action), and the
// tool listings of GET /v1/tools in each ecosystem's function-calling shape.
import { z } from 'zod';
import { logPageSchema, processSnapshotSchema } from './process-snapshot.ts';
import { bashActions } from './tool-inputs.ts';
import { count } from './wire-values.ts';

// Answers are open objects: the contract may add fields to an answer, never remove or change one.

export const readFileResultSchema = z.looseObject({
  path: z.string(),
  content: z.string(),
  startLine: z.number().int(),
  endLine: z.number().int(),
  totalLines: count,
  truncated: z.boolean(),
  version: z.string(),
});

export const writeFileResultSchema = z.looseObject({
  resolvedPath: z.string(),
  mode: z.enum(['create', 'overwrite', 'append']),
  created: z.boolean(),
  appended: z.boolean(),
  bytesWritten: count,
  version: z.string(),
});

export const patchedFileSchema = z.looseObject({
  path: z.string(),
  action: z.enum(['add', 'update', 'delete', 'move']),
  movedTo: z.string().optional(),
  diff: z.string(),
});

export const applyPatchResultSchema = z.looseObject({
  files: z.array(patchedFileSchema),
  summary: z.string().describe('"A path", "M path", "D path" lines: adds, then updates and moves, then deletes.'),
  dryRun: z.boolean().describe('The patch was only checked: no file changed.'),
});

export const bashExecResultSchema = z.looseObject({
  exitCode: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  durationMs: count,
  truncated: z.boolean(),
  /** Files the command changed that kept the version written through the API meanwhile. */
  conflicts: z.array(z.string()).optional(),
  /** Why some of the command's changes were not kept. */
  error: z.string().optional(),
});

/** bash `status`: the snapshot, with why it failed and what its sync-back left to the API's version. */
export const bashStatusResultSchema = processSnapshotSchema.extend({
  error: z.string().nullable(),
  conflicts: z.array(z.string()),
});

export const bashWriteResultSchema = z.looseObject({ processId: z.string(), bytesWritten: count });

export const bashListResultSchema = z.looseObject({ processes: z.array(processSnapshotSchema) });

/** bash's result, whichever the action (the document lists status under start and stop). */
export const bashResultSchema = z
  .union([
    bashExecResultSchema.describe('exec'),
    processSnapshotSchema.describe('start, stop (status adds error and conflicts)'),
    logPageSchema.describe('logs'),
    bashWriteResultSchema.describe('write'),
    bashListResultSchema.describe('list'),
  ])
  .describe(`By action (${bashActions.join(', ')}).`);

/** The `result` of each built-in tool; a tool without one here is documented with an open object. */
export const toolResultSchemas: Record<string, z.ZodType> = {
  read_file: readFileResultSchema,
  write_file: writeFileResultSchema,
  apply_patch: applyPatchResultSchema,
  bash: bashResultSchema,
};

/** The shapes GET /v1/tools?format= lists the tools in. */
export const toolFormats = ['jsonschema', 'openai', 'anthropic', 'mcp'] as const;
export type ToolFormat = (typeof toolFormats)[number];

/** MCP's hints about what a tool does. */
export const toolAnnotationsSchema = z.looseObject({
  readOnlyHint: z.boolean(),
  destructiveHint: z.boolean(),
  idempotentHint: z.boolean().optional(),
});
export type ToolAnnotations = z.output<typeof toolAnnotationsSchema>;

/** A JSON Schema of a tool's arguments. */
const argumentsJsonSchema = z.record(z.string(), z.unknown());

/** One tool in each ecosystem's function-calling shape. */
export const toolDefinitionSchemas = {
  jsonschema: z.looseObject({ name: z.string(), description: z.string(), inputSchema: argumentsJsonSchema }),
  openai: z.looseObject({
    type: z.literal('function'),
    function: z.looseObject({ name: z.string(), description: z.string(), parameters: argumentsJsonSchema }),
  }),
  anthropic: z.looseObject({ name: z.string(), description: z.string(), input_schema: argumentsJsonSchema }),
  mcp: z.looseObject({
    name: z.string(),
    description: z.string(),
    inputSchema: argumentsJsonSchema,
    annotations: toolAnnotationsSchema,
  }),
} satisfies Record<ToolFormat, z.ZodType>;
export type ToolDefinitions = { [Format in ToolFormat]: z.output<(typeof toolDefinitionSchemas)[Format]> };

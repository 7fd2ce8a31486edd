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

/** The most characters of each of stdout and stderr an exec's answer carries; past it `truncated` is true. */
export const MAX_EXEC_STREAM_CHARS = 1_048_576;

export const bashExecResultSchema = z.looseObject({
  exitCode: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  timedOut: z.boolean(),
  durationMs: count,
  truncated: z.boolean(),
  engine: z.enum(['edge', 'runner']).describe('Where the command ran: in the request handler, or on a runner.'),
  /** Files the command changed that kept the version written through the API meanwhile. */
  conflicts: z.array(z.string()).optional(),
  /** Why some of the command's changes were not kept. */
  error: z.string().optional(),
});

export type BashExecResult = z.output<typeof bashExecResultSchema>;

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

/** grep in content mode: the matching lines, each with its context. */
export const grepContentResultSchema = z.looseObject({
  matches: z.array(
    z.looseObject({
      path: z.string(),
      line: z.number().int().min(1),
      text: z.string().describe('The line without its line end, cut at 2,000 characters.'),
      before: z
        .array(z.string())
        .optional()
        .describe('Context lines before the match not shown with an earlier match.'),
      after: z.array(z.string()).optional().describe('Context lines after the match, up to the next match.'),
    }),
  ),
  files: count.describe('How many files the matches returned come from.'),
  truncated: z.boolean(),
  nextOffset: count.optional(),
});

/** grep in files_with_matches mode, and glob: paths in order. */
export const searchPathsResultSchema = z.looseObject({
  paths: z.array(z.string()),
  truncated: z.boolean(),
  nextOffset: count.optional(),
});

/** grep in count mode: matching lines per file. */
export const grepCountResultSchema = z.looseObject({
  counts: z.array(z.looseObject({ path: z.string(), count: count })),
  truncated: z.boolean(),
  nextOffset: count.optional(),
});

export const grepResultSchema = z
  .union([
    grepContentResultSchema.describe('content'),
    searchPathsResultSchema.describe('files_with_matches'),
    grepCountResultSchema.describe('count'),
  ])
  .describe('By outputMode (content, files_with_matches, count).');

/** The `result` of each built-in tool; a tool without one here is documented with an open object. */
export const toolResultSchemas: Record<string, z.ZodType> = {
  read_file: readFileResultSchema,
  write_file: writeFileResultSchema,
  apply_patch: applyPatchResultSchema,
  bash: bashResultSchema,
  grep: grepResultSchema,
  glob: searchPathsResultSchema,
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

// The tools' arguments, declared once: the server validates calls with them, the tool listings and
// the OpenAPI document are generated from them, and the typed client derives its argument types.
import { z } from 'zod';

/** read_file's arguments. */
export const readFileInput = z.strictObject({
  path: z.string().describe('File path relative to the workspace root, e.g. "src/index.ts".'),
  startLine: z.number().int().min(1).optional().describe('First line to return, 1-based (default 1).'),
  endLine: z.number().int().min(1).optional().describe('Last line to return, inclusive (default: the last line).'),
  maxChars: z.number().int().min(1).optional().describe('Cut the content after this many characters (default 20,000).'),
});

/** write_file's arguments. */
export const writeFileInput = z.strictObject({
  path: z.string().describe('File path relative to the workspace root; missing parent directories are created.'),
  content: z.string().describe('Text to write, stored as UTF-8 exactly as given (line endings included).'),
  mode: z
    .enum(['create', 'overwrite', 'append'])
    .optional()
    .describe(
      'create fails if the file exists; overwrite replaces it (default); append adds to its end, creating it if missing.',
    ),
  expectedVersion: z
    .string()
    .optional()
    .describe('Write only if the file is still at this version (from read_file or an earlier write).'),
});

/** apply_patch's arguments. */
export const applyPatchInput = z.strictObject({
  patch: z
    .string()
    .describe(
      'The patch: the Codex envelope ("*** Begin Patch" ... "*** End Patch" with "*** Add File:", "*** Update File:" ' +
        '(optionally "*** Move to:"), "*** Delete File:", "@@" hunks of " ", "-", "+" lines) or a git-style unified diff.',
    ),
  dryRun: z.boolean().optional().describe('Check the patch and return the result without changing any file.'),
});

/** bash's actions: each call names one. */
export const bashActions = ['exec', 'start', 'status', 'logs', 'write', 'stop', 'list'] as const;
export type BashAction = (typeof bashActions)[number];
/** Where an exec may run: `edge` in the request handler, `runner` on a sandboxed runner, `auto` the edge when it runs the command identically. */
export const bashEngines = ['auto', 'edge', 'runner'] as const;
export type BashEngine = (typeof bashEngines)[number];

/** bash's arguments. */
export const bashInput = z.strictObject({
  action: z
    .enum(bashActions)
    .describe(
      'exec runs and waits; start runs in the background; status, logs, write (stdin), stop and list manage processes.',
    ),
  command: z.string().min(1).max(100_000).optional().describe('exec, start: the bash command line.'),
  cwd: z
    .string()
    .optional()
    .describe('exec, start: working directory relative to the workspace root (default the root).'),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(3_600_000)
    .optional()
    .describe('exec: kill the command after this long (default 120,000).'),
  env: z.record(z.string(), z.string()).optional().describe('exec, start: extra environment variables.'),
  engine: z
    .enum(bashEngines)
    .optional()
    .describe(
      'exec: where it runs. "edge": in the request handler, by a bash interpreter over the workspace (no runner; a command it lacks is refused); ' +
        '"runner": on a sandboxed runner; "auto" (default): the edge when every command, option and shell feature is one it runs identically, else a runner.',
    ),
  processId: z.string().min(1).max(200).optional().describe('status, logs, write, stop: the process.'),
  offset: z.number().int().min(0).optional().describe('logs: first character to return (default: the oldest kept).'),
  limit: z
    .number()
    .int()
    .min(1)
    .max(1_048_576)
    .optional()
    .describe('logs: at most this many characters (default 65,536).'),
  input: z.string().optional().describe('write: text to send to stdin.'),
  eof: z.boolean().optional().describe('write: close stdin after the input.'),
  graceMs: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .optional()
    .describe('stop: how long after SIGTERM to send SIGKILL (default 5,000).'),
  tty: z
    .boolean()
    .optional()
    .describe("start: run the process on a pseudo-terminal; its log is the terminal's output (default false)."),
  cols: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("start with tty: the terminal's width in columns (default 120)."),
  rows: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("start with tty: the terminal's height in rows (default 40)."),
});

/** How grep reports what it found. */
export const grepOutputModes = ['content', 'files_with_matches', 'count'] as const;
export type GrepOutputMode = (typeof grepOutputModes)[number];

/** The most lines of context a grep match may carry on each side. */
export const MAX_GREP_CONTEXT = 1_000;
/** The most results one grep or glob call returns; `offset` pages on. */
export const MAX_SEARCH_RESULTS = 10_000;

const searchPath = z
  .string()
  .optional()
  .describe('A file or directory to search, relative to the workspace root (default the root).');
const searchHidden = z
  .boolean()
  .optional()
  .describe('Also search hidden files and directories (names starting with "."), .git included, as ripgrep --hidden.');
const searchNoIgnore = z
  .boolean()
  .optional()
  .describe('Do not apply .gitignore, .ignore and .rgignore rules (default: apply them, as ripgrep does).');
const searchMaxResults = z
  .number()
  .int()
  .min(1)
  .max(MAX_SEARCH_RESULTS)
  .optional()
  .describe('Return at most this many results (default 1,000); the answer says whether more remain.');
const searchOffset = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe("Skip this many results first: pass the previous answer's nextOffset to page on (default 0).");
const contextLines = (side: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(MAX_GREP_CONTEXT)
    .optional()
    .describe(`content mode: lines of context ${side} each match (default 0).`);

/** grep's arguments: ripgrep's defaults and names where it has them. */
export const grepInput = z.strictObject({
  pattern: z
    .string()
    .max(10_000)
    .describe('A regular expression in RE2 syntax (linear time), or the literal text with fixedStrings.'),
  path: searchPath,
  glob: z
    .string()
    .min(1)
    .max(4_096)
    .optional()
    .describe('Search only files whose path matches this glob, as ripgrep -g ("*.ts", "src/**/*.tsx"; "!" excludes).'),
  type: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('Search only files of this ripgrep file type ("ts", "py", "rust", "go", "md", ...).'),
  caseInsensitive: z.boolean().optional().describe('Match without regard to case (default false).'),
  fixedStrings: z.boolean().optional().describe('Treat the pattern as literal text, not a regular expression.'),
  multiline: z
    .boolean()
    .optional()
    .describe('Let a match span lines ("\\n" in the pattern matches line ends; "." still does not, unless (?s)).'),
  outputMode: z
    .enum(grepOutputModes)
    .optional()
    .describe('content: matching lines; files_with_matches: paths only (default); count: matching lines per file.'),
  before: contextLines('before'),
  after: contextLines('after'),
  context: contextLines('before and after'),
  hidden: searchHidden,
  noIgnore: searchNoIgnore,
  maxResults: searchMaxResults,
  offset: searchOffset,
});

/** glob's arguments. */
export const globInput = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .max(4_096)
    .describe(
      'A glob over paths, as ripgrep -g: "*", "**", "?", "[...]", "{a,b}"; without "/" it matches names at any depth.',
    ),
  path: searchPath,
  hidden: searchHidden,
  noIgnore: searchNoIgnore,
  sort: z
    .enum(['path', 'recent'])
    .optional()
    .describe('path: in path order (default); recent: the most recently changed first.'),
  maxResults: searchMaxResults,
  offset: searchOffset,
});

// read_file: a line range of a UTF-8 file, byte-exact line endings, capped at maxChars.
import { readFileInput } from '../contract/tool-inputs.ts';
import { ToolError } from '../core/errors.ts';
import { parseVirtualPath } from '../core/virtual-path.ts';
import { defineTool } from './tool.ts';
import { countNewlines, cutAtChars, lineStarts } from '../core/text-lines.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export const readFile = defineTool({
  name: 'read_file',
  description:
    'Read a UTF-8 text file from the workspace, optionally a range of lines. Returns the content with its own line endings, ' +
    'the line range returned, the total line count, whether the content was cut at maxChars, and the file version.',
  input: readFileInput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async execute(args, { workspace, limits }) {
    if (args.startLine !== undefined && args.endLine !== undefined && args.endLine < args.startLine) {
      throw new ToolError(
        'invalid_argument',
        `endLine ${args.endLine} is before startLine ${args.startLine}; give endLine ≥ startLine.`,
        {
          startLine: args.startLine,
          endLine: args.endLine,
        },
      );
    }
    const resolved = await workspace.resolve(args.path, 'read');
    const entry = resolved.entry;
    if (!entry)
      throw new ToolError('not_found', `${args.path} does not exist; list the directory to find the file you want.`, {
        path: args.path,
      });
    if (entry.type !== 'file') {
      throw new ToolError(
        'is_directory',
        `${args.path} is a directory; list it with GET /files?prefix= or read a file inside it.`,
        { path: args.path },
      );
    }
    let text: string;
    try {
      text = utf8.decode(await workspace.readBytes(resolved.path, entry));
    } catch (error) {
      if (error instanceof TypeError) {
        throw new ToolError('binary_file', `${args.path} is not valid UTF-8 text, so read_file cannot return it.`, {
          path: args.path,
          size: entry.size,
        });
      }
      throw error;
    }
    const starts = lineStarts(text);
    const totalLines = starts.length;
    const startLine = args.startLine ?? 1;
    if (startLine > Math.max(totalLines, 1)) {
      throw new ToolError(
        'invalid_argument',
        `startLine ${startLine} is past the end of ${args.path}, which has ${totalLines} lines.`,
        {
          path: args.path,
          startLine,
          totalLines,
        },
      );
    }
    const endLine = Math.min(args.endLine ?? totalLines, totalLines);
    const from = starts[startLine - 1] ?? text.length;
    const to = endLine < totalLines ? (starts[endLine] ?? text.length) : text.length;
    const range = text.slice(from, to);
    const maxChars = args.maxChars ?? limits.defaultReadMaxChars;
    const content = cutAtChars(range, maxChars);
    const truncated = content.length < range.length;
    return {
      // The path as asked for (canonical); a symlink's target is not what the caller named.
      path: parseVirtualPath(args.path).path,
      content,
      startLine,
      // When cut, endLine names the last line the content reaches, so a reader can continue from there.
      endLine: truncated ? lastLineReached(startLine, content) : endLine,
      totalLines,
      truncated,
      version: workspace.formatVersion(entry.version),
    };
  },
});

function lastLineReached(startLine: number, content: string): number {
  const newlines = countNewlines(content);
  return content.endsWith('\n') ? startLine + newlines - 1 : startLine + newlines;
}

// glob: the files whose paths match a glob, as `rg --files -g PATTERN` lists them, a page at a time.
import { globInput } from '../contract/tool-inputs.ts';
import { walkWorkspace } from './search/search-walk.ts';
import { defineTool } from './tool.ts';

/** Results per page when the call gives no maxResults. */
const DEFAULT_MAX_RESULTS = 1_000;

export const glob = defineTool({
  name: 'glob',
  description:
    'List the files of the workspace whose paths match a glob, as ripgrep --files -g does: "*", "**", "?", "[...]", ' +
    '"{a,b}"; a glob without "/" matches names at any depth. .gitignore, .ignore and .rgignore rules apply and ' +
    'hidden files are skipped unless asked. Returns paths in path order (or most recently changed first), a page at a time.',
  input: globInput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async execute(args, { workspace }) {
    const files = await walkWorkspace(workspace, {
      path: args.path,
      hidden: args.hidden ?? false,
      noIgnore: args.noIgnore ?? false,
      globs: [args.pattern],
    });
    // The walk gives path order; a stable sort by version keeps it among files changed together.
    const ordered = args.sort === 'recent' ? files.slice().sort((a, b) => b.entry.version - a.entry.version) : files;
    const offset = args.offset ?? 0;
    const end = offset + (args.maxResults ?? DEFAULT_MAX_RESULTS);
    const truncated = end < ordered.length;
    const paths = ordered.slice(offset, end).map((file) => file.path);
    return truncated ? { paths, truncated, nextOffset: end } : { paths, truncated };
  },
});

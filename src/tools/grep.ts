// grep: ripgrep's content search over the workspace's store, answered in the request handler
// (a file whose search would hold the event loop long goes to the home's search threads, when it has them).
import { grepInput, type GrepOutputMode } from '../contract/tool-inputs.ts';
import { concurrently } from '../core/concurrently.ts';
import { WorkBudget } from '../core/work-budget.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { walkWorkspace, type WalkedFile } from './search/search-walk.ts';
import type { CollectOptions } from './search/text-context.ts';
import { compileTextPattern, type TextPattern } from './search/text-pattern.ts';
import { mayMatchBytes, runsLong, searchAdmittedBytes, type FileMatches } from './search/text-search.ts';
import { defineTool } from './tool.ts';

const DEFAULT_MAX_RESULTS = 1_000;

/** Files searched per batch: their contents not in the cache are fetched together, then searched in path order. */
const BATCH_FILES = 64;
/** Contents fetched from the blob store at once. */
const FETCH_CONCURRENCY = 8;

export const grep = defineTool({
  name: 'grep',
  description:
    'Search file contents with a regular expression (RE2 syntax, linear time) or literal text, as ripgrep does: ' +
    '.gitignore rules apply, hidden and binary files are skipped unless asked. outputMode files_with_matches ' +
    '(default) lists matching paths, content lists matching lines with line numbers and optional context, count ' +
    'counts matching lines per file. Results are sorted by path and paged by maxResults and offset.',
  input: grepInput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  async execute(args, { workspace, searchThreads }) {
    const pattern = compileTextPattern(args.pattern, args);
    const clock = new WorkBudget(Number.POSITIVE_INFINITY);
    const flags = { caseInsensitive: args.caseInsensitive, fixedStrings: args.fixedStrings, multiline: args.multiline };
    const onThread: SearchBytes | undefined =
      searchThreads && ((bytes, options) => searchThreads.search(bytes, { pattern: args.pattern, flags, options }));
    const files = await walkWorkspace(
      workspace,
      {
        path: args.path,
        hidden: args.hidden === true,
        noIgnore: args.noIgnore === true,
        globs: args.glob === undefined ? [] : [args.glob],
        type: args.type,
      },
      clock,
    );
    const mode: GrepOutputMode = args.outputMode ?? 'files_with_matches';
    const maxResults = args.maxResults ?? DEFAULT_MAX_RESULTS;
    const offset = args.offset ?? 0;
    // One result past the page tells whether more remain.
    const wanted = offset + maxResults + 1;
    const found: Array<{ path: string; matches: FileMatches }> = [];
    let results = 0;
    const options = (): CollectOptions => ({
      limit: mode === 'content' ? wanted - results : mode === 'files_with_matches' ? 1 : Number.POSITIVE_INFINITY,
      lines: mode === 'content',
      before: args.before ?? args.context ?? 0,
      after: args.after ?? args.context ?? 0,
    });
    await searchFiles(workspace, files, { pattern, clock, onThread }, options, (file, matches) => {
      found.push({ path: file.path, matches });
      results += mode === 'content' ? matches.matches.length : 1;
      return results < wanted;
    });
    const truncated = results > offset + maxResults;
    const page = { truncated, ...(truncated ? { nextOffset: offset + maxResults } : {}) };
    if (mode === 'files_with_matches') {
      return { paths: found.slice(offset, offset + maxResults).map((file) => file.path), ...page };
    }
    if (mode === 'count') {
      return {
        counts: found
          .slice(offset, offset + maxResults)
          .map((file) => ({ path: file.path, count: file.matches.count })),
        ...page,
      };
    }
    const matches = found
      .flatMap((file) => file.matches.matches.map((match) => ({ path: file.path, ...match })))
      .slice(offset, offset + maxResults);
    return { matches, files: new Set(matches.map((match) => match.path)).size, ...page };
  },
});

/** Searches one file's bytes as searchFileBytes does. */
type SearchBytes = (bytes: Uint8Array, options: CollectOptions) => Promise<FileMatches | undefined>;

/** How a call searches each file: on the event loop by `clock`, or on a search thread when one re2js call would run long. */
interface FileSearch {
  pattern: TextPattern;
  clock: WorkBudget;
  onThread: SearchBytes | undefined;
}

/**
 * Searches the files in path order until `take` answers false. Contents come from the blob cache
 * without waiting where they can; the others of a batch are fetched a few at a time first.
 */
async function searchFiles(
  workspace: Workspace,
  files: readonly WalkedFile[],
  { pattern, clock, onThread }: FileSearch,
  options: () => CollectOptions,
  take: (file: WalkedFile, matches: FileMatches) => boolean,
): Promise<void> {
  const contents: Array<Uint8Array | undefined> = new Array(BATCH_FILES);
  for (let first = 0; first < files.length; first += BATCH_FILES) {
    const end = Math.min(first + BATCH_FILES, files.length);
    let missing: number[] | undefined;
    for (let at = first; at < end; at++) {
      const { blob, size } = files[at]!.entry;
      // An empty file has no lines to match.
      const empty = size === 0 || blob === null;
      const cached = empty ? undefined : workspace.cachedBlob(blob);
      contents[at - first] = cached;
      if (cached === undefined && !empty) (missing ??= []).push(at);
    }
    if (missing !== undefined) {
      await concurrently(missing, FETCH_CONCURRENCY, async (at) => {
        const file = files[at]!;
        contents[at - first] = await workspace.readBytes(file.resolvedPath, file.entry);
      });
    }
    for (let at = first; at < end; at++) {
      const bytes = contents[at - first];
      if (bytes === undefined || bytes.length === 0) continue;
      let matches: FileMatches | undefined;
      if (onThread !== undefined && runsLong(bytes, pattern)) {
        // One re2js call over such a file cannot pause, and its quick test is a long scan too: the thread runs both.
        matches = await onThread(bytes, options());
      } else {
        // Most files fail the quick test: they cost no promise.
        const admitted = mayMatchBytes(bytes, pattern, clock);
        if (clock.spend(0)) await clock.pause();
        if (!admitted) continue;
        matches = await searchAdmittedBytes(bytes, pattern, options(), clock);
      }
      if (matches !== undefined && !take(files[at]!, matches)) return;
    }
  }
}

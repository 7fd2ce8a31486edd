// A search thread of the Node home: searches one file's bytes for grep off the server's event loop (see search-threads.ts).
import { parentPort } from 'node:worker_threads';
import type { ErrorCode, ErrorDetails } from '../core/errors.ts';
import { isToolError } from '../core/errors.ts';
import { WorkBudget } from '../core/work-budget.ts';
import { compileTextPattern } from '../tools/search/text-pattern.ts';
import { searchFileBytes, type FileMatches, type ThreadSearch } from '../tools/search/text-search.ts';

/** What a thread is sent: a copy of one file's bytes, and the search as the call asked it. */
export interface SearchThreadJob {
  bytes: Uint8Array;
  request: ThreadSearch;
}

/** What a thread answers a job: the matches, a ToolError's parts, or an unexpected failure's text (for the log). */
export type SearchThreadAnswer =
  | { matches: FileMatches | undefined }
  | { error: { code: ErrorCode; message: string; details: ErrorDetails | undefined } }
  | { failure: string };

async function answer({ bytes, request }: SearchThreadJob): Promise<SearchThreadAnswer> {
  try {
    const pattern = compileTextPattern(request.pattern, request.flags);
    // Nothing else waits on this thread's loop: the search never pauses.
    const clock = new WorkBudget(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    return { matches: await searchFileBytes(bytes, pattern, request.options, clock) };
  } catch (error) {
    if (isToolError(error)) return { error: { code: error.code, message: error.message, details: error.details } };
    return { failure: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}

const port = parentPort;
if (port === null) throw new Error('search-thread.ts runs as a worker thread, started by SearchThreadPool');
port.on('message', (job: SearchThreadJob) => {
  void answer(job).then((reply) => port.postMessage(reply));
});

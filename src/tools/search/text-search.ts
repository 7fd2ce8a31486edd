// Searching one file's bytes as ripgrep does: binary files skipped, UTF-8 lines, matches with their context.
import type { WorkBudget } from '../../core/work-budget.ts';
import { MatchCollector, type CollectOptions, type LineMatch } from './text-context.ts';
import { passesPrefilter } from './text-literal.ts';
import type { PatternOptions, TextPattern } from './text-pattern.ts';
import { INDEX_CHAR_COST, scanLines } from './text-scan.ts';

export type { LineMatch } from './text-context.ts';
export { MAX_LINE_CHARS } from './text-context.ts';

/**
 * A NUL byte this early makes a file binary and skipped. ripgrep reads a file in 64 KiB buffers and
 * quits at the first holding a NUL, so for the first buffer the whole file goes unreported.
 */
export const BINARY_WINDOW_BYTES = 64 * 1024;

/** Files are decoded in slices of this size, so a large one never holds the event loop long. */
const DECODE_SLICE_BYTES = 1024 * 1024;

/**
 * re2js tries a line in one synchronous call, and a multiline pattern the whole file: past this
 * many bytes (about 10 ms of re2js) a home that can search off the event loop does (SearchThreads).
 */
export const LONG_RUN_BYTES = 1024 * 1024;

export interface FileMatches {
  /** Matching lines found (up to the limit). */
  count: number;
  /** With `lines`: the matching lines with their context, in order. */
  matches: LineMatch[];
}

/** What a search thread needs to search one file as searchFileBytes would: the pattern as the call gave it. */
export interface ThreadSearch {
  pattern: string;
  flags: PatternOptions;
  options: CollectOptions;
}

/**
 * Searches one file's bytes off the event loop (the Node home's worker threads), answering what
 * searchFileBytes answers: the quick test, then the search. Fails with `unavailable` when the
 * thread stops before answering.
 */
export interface SearchThreads {
  search(bytes: Uint8Array, request: ThreadSearch): Promise<FileMatches | undefined>;
}

const decoder = new TextDecoder('utf-8');

/**
 * The matching lines of one file, or undefined when it has none or is binary. The text is UTF-8:
 * a leading byte order mark is dropped (as rg drops it) and each invalid sequence reads as
 * U+FFFD, so a line rg shows as raw bytes is reported with U+FFFD in their place. A NUL past the
 * binary window ends the search at its line.
 */
export async function searchFileBytes(
  bytes: Uint8Array,
  pattern: TextPattern,
  options: CollectOptions,
  clock: WorkBudget,
): Promise<FileMatches | undefined> {
  const admitted = mayMatchBytes(bytes, pattern, clock);
  // spend answers true from the end of a slice until the pause, so spending nothing asks.
  if (clock.spend(0)) await clock.pause();
  if (!admitted) return undefined;
  return searchAdmittedBytes(bytes, pattern, options, clock);
}

/**
 * False when the bytes cannot hold a match (the pattern's literals are not all there): the quick
 * test, without waiting, that most files of a search fail. Counts its work on the clock; the
 * caller pauses when the clock is due.
 */
export function mayMatchBytes(bytes: Uint8Array, pattern: TextPattern, clock: WorkBudget): boolean {
  const admitted = passesPrefilter(bytes, pattern.prefilter);
  clock.spend(bytes.length * INDEX_CHAR_COST * pattern.prefilter.all.length);
  return admitted;
}

/** searchFileBytes for bytes that passed mayMatchBytes. */
export async function searchAdmittedBytes(
  bytes: Uint8Array,
  pattern: TextPattern,
  options: CollectOptions,
  clock: WorkBudget,
): Promise<FileMatches | undefined> {
  let text = await decodeText(bytes, clock);
  const nul = text.indexOf('\0');
  if (nul !== -1) {
    // The first NUL character is the first NUL byte; its byte offset decides.
    if (bytes.indexOf(0) < BINARY_WINDOW_BYTES) return undefined;
    text = text.slice(0, text.lastIndexOf('\n', nul) + 1);
  }
  const collector = new MatchCollector(text, options);
  await scanLines(text, pattern, collector.add, clock);
  collector.finish();
  return collector.count === 0 ? undefined : { count: collector.count, matches: collector.matches };
}

/**
 * Whether searching these bytes with this pattern would make one re2js call over more than
 * LONG_RUN_BYTES: a multiline pattern on a file that large, or a line that long. Lines are found
 * by looking back from LONG_RUN_BYTES ahead for a line feed, so a file of short lines costs a
 * few steps per mebibyte.
 */
export function runsLong(bytes: Uint8Array, pattern: Pick<TextPattern, 'multiline'>): boolean {
  if (bytes.length <= LONG_RUN_BYTES) return false;
  if (pattern.multiline) return true;
  for (let lineStart = 0; lineStart + LONG_RUN_BYTES < bytes.length;) {
    const newline = bytes.lastIndexOf(10, lineStart + LONG_RUN_BYTES);
    if (newline < lineStart) return true;
    lineStart = newline + 1;
  }
  return false;
}

async function decodeText(bytes: Uint8Array, clock: WorkBudget): Promise<string> {
  if (bytes.length <= DECODE_SLICE_BYTES) {
    if (clock.spend(bytes.length)) await clock.pause();
    return decoder.decode(bytes);
  }
  const streaming = new TextDecoder('utf-8');
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += DECODE_SLICE_BYTES) {
    const end = Math.min(at + DECODE_SLICE_BYTES, bytes.length);
    parts.push(streaming.decode(bytes.subarray(at, end), { stream: end < bytes.length }));
    if (clock.spend(end - at)) await clock.pause();
  }
  return parts.join('');
}

// What the bench sections share: clients run in their own processes, how figures are told, and the
// summary of issue 17's rows printed at the end of a run.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ArchiveCallSpec } from './archive-client.ts';
import type { LoadResult, LoadSpec } from './load-client.ts';
import type { McpCallSpec } from './mcp-client.ts';

/** Runs `script --child <spec>` in its own process, so the server keeps its event loop to itself. */
async function inChild<T>(script: string, spec: unknown): Promise<T> {
  const path = new URL(script, import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    // --no-warnings: undici's fetch warns once abort listeners pile up on the MCP client's signal,
    // and printing those warnings would be counted as the client's cost of each call.
    ['--no-warnings', '--import', 'tsx', path, '--child', JSON.stringify(spec)],
    { maxBuffer: 512 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as T;
}

/** HTTP load from bench/load-client.ts, in a child process. */
export const load = (spec: LoadSpec): Promise<LoadResult> => inChild('./load-client.ts', spec);

/** One timed archive upload or download from bench/archive-client.ts, in a child process: its milliseconds. */
export const archiveCall = (spec: ArchiveCallSpec): Promise<number> => inChild('./archive-client.ts', spec);

/** Sequential MCP tool calls from bench/mcp-client.ts, in a child process. */
export const mcpCalls = (spec: McpCallSpec): Promise<LoadResult> => inChild('./mcp-client.ts', spec);

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Successful requests a second. */
export const perSecond = (result: LoadResult): number => result.requests / result.seconds;

export function describe(result: LoadResult, unit = 'req/s'): string {
  return `${perSecond(result).toFixed(0)} ${unit}, p50 ${percentile(result.latenciesMs, 50).toFixed(2)} ms, p99 ${percentile(result.latenciesMs, 99).toFixed(2)} ms, errors ${result.errors}`;
}

/**
 * Measures each side `rounds` times for `durationMs / rounds`, taking turns in an order that rotates
 * every round, and merges each side's rounds: on a shared, noisy machine a slow spell then falls on
 * every side alike rather than on whichever ran at the time. Each side gets `durationMs` in all.
 */
export async function interleaved<K extends string>(
  measures: Record<K, (durationMs: number) => Promise<LoadResult>>,
  durationMs: number,
  rounds = 3,
): Promise<Record<K, LoadResult>> {
  const names = Object.keys(measures) as K[];
  const merged = {} as Record<K, LoadResult>;
  for (const name of names) merged[name] = { requests: 0, errors: 0, seconds: 0, latenciesMs: [] };
  for (let round = 0; round < rounds; round += 1) {
    for (let turn = 0; turn < names.length; turn += 1) {
      const name = names[(round + turn) % names.length]!;
      const result = await measures[name](durationMs / rounds);
      const into = merged[name];
      into.requests += result.requests;
      into.errors += result.errors;
      into.seconds += result.seconds;
      into.latenciesMs.push(...result.latenciesMs);
    }
  }
  return merged;
}

export function verdict(ratio: number, target: string, ok: boolean): string {
  return `${ratio.toFixed(2)}x (target ${target}: ${ok ? 'met' : 'NOT met'})`;
}

const rows: string[] = [];

/** Prints an issue row's line, and keeps it for the summary at the end of the run. */
export function row(id: string, line: string): void {
  console.log(`${id} ${line}`);
  rows.push(`${id.padEnd(8)} ${line}`);
}

export function printRows(): void {
  if (rows.length === 0) return;
  console.log('\n# Benchmark rows measured in this run');
  for (const line of rows) console.log(line);
}

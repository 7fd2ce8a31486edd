// The host's processes as tests see them: command lines read from /proc, and names unique to one run.
import { readdirSync, readFileSync } from 'node:fs';

/** `sleep` commands of durations unique to this run, so processes of another run on the same host are never mistaken for ours. */
export function uniqueSleeps(count: number): string[] {
  const base = 100_000 + Math.floor(Math.random() * 800_000);
  return Array.from({ length: count }, (_, i) => `sleep ${base + i}.5`);
}

/** The command lines of the host's processes that hold one of `names`. */
export function hostProcessesNamed(names: string[]): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      } catch {
        return '';
      }
    })
    .filter((cmdline) => names.some((name) => cmdline.includes(name)));
}

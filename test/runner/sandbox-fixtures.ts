// Shared set-up for the sandbox tests: temporary workspaces, commands with captured output, host process checks.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Isolation, RunningCommand } from '../../src/runner/node/running-command.ts';
import { bubblewrapInstalled, startCommand, type SandboxOptions } from '../../src/runner/node/sandbox.ts';

/** Why bubblewrap tests cannot run here, when they cannot. */
export const bwrapSkipReason = bubblewrapInstalled() ? undefined : 'bubblewrap is not installed on this host';

/** Each isolation mode, with why it cannot run here when it cannot. */
export const isolationModes: { isolation: Isolation; skipReason: string | undefined }[] = [
  { isolation: 'bwrap', skipReason: bwrapSkipReason },
  { isolation: 'process-group', skipReason: undefined },
];

const workspaces: string[] = [];

export function tempWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-sandbox-'));
  workspaces.push(dir);
  return dir;
}

export function removeWorkspaces(): void {
  for (const dir of workspaces.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface Started {
  command: RunningCommand;
  chunks: { stream: 'stdout' | 'stderr'; text: string }[];
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds `text`; rejects if the command exits first. */
  waitForOutput(text: string): Promise<void>;
}

export type StartOptions = Partial<Omit<SandboxOptions, 'command' | 'onOutput'>> & { isolation: Isolation };

export function start(command: string, options: StartOptions): Started {
  const chunks: Started['chunks'] = [];
  const waiters: (() => void)[] = [];
  const { workspaceDir, cwd, env, ...rest } = options;
  const running = startCommand({
    ...rest,
    workspaceDir: workspaceDir ?? tempWorkspace(),
    cwd: cwd ?? '',
    env: env ?? {},
    command,
    onOutput(stream, text) {
      chunks.push({ stream, text });
      for (const waiter of waiters) waiter();
    },
  });
  const text = (stream: 'stdout' | 'stderr') => () =>
    chunks
      .filter((chunk) => chunk.stream === stream)
      .map((chunk) => chunk.text)
      .join('');
  const stdout = text('stdout');
  return {
    command: running,
    chunks,
    stdout,
    stderr: text('stderr'),
    waitForOutput: (wanted) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (stdout().includes(wanted)) resolve();
        };
        waiters.push(check);
        check();
        void running.exited.then(() =>
          reject(new Error(`exited before printing ${JSON.stringify(wanted)}: ${stdout()}`)),
        );
      }),
  };
}

/** Runs a command to its end, feeding `input` and closing stdin first. */
export async function run(command: string, { input, ...options }: StartOptions & { input?: string }) {
  const started = start(command, options);
  if (input !== undefined) started.command.write(input);
  started.command.endInput();
  const exit = await started.command.exited;
  return { ...exit, stdout: started.stdout(), stderr: started.stderr(), chunks: started.chunks };
}

/** Host pids whose command line is exactly `words` (for example `sleep 123.5`). */
export function hostProcessesRunning(words: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') === words;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** `sleep` command lines unique to this test run, so no other process can match them. */
export function uniqueSleeps(count: number): string[] {
  const base = 100_000 + Math.floor(Math.random() * 800_000);
  return Array.from({ length: count }, (_, index) => `sleep ${base}.${index + 1}`);
}

// The program line that runs one command: the uid change, the rlimits, a terminal or one output stream, then bash.
import { ToolError } from '../../core/errors.ts';
import { becomeUserArgs, type CommandUser } from './command-user.ts';
import { findUtility } from './command-environment.ts';

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** stdout and stderr apart (exec's answer has both), as one stream in write order, or a pseudo-terminal's output. */
export type CommandOutput = { kind: 'separate' } | { kind: 'merged' } | { kind: 'terminal'; size: TerminalSize };

export interface CommandLineOptions {
  /** The bash that runs the command, as the command's side sees it. */
  bash: string;
  command: string;
  /** Becomes this user before anything else runs; undefined keeps the runner's user. */
  user?: CommandUser;
  /** Runs around bash after the uid change (prlimit under rlimits). */
  prefix: readonly string[];
  output: CommandOutput;
  /** The caller's SHELL, restored for the command in a terminal (`script` itself is made to run sh). */
  callerShell?: string;
}

/** The variables a terminal's launcher needs, over the command's own: `script` runs its line with $SHELL. */
export const TERMINAL_LAUNCH_ENV = { SHELL: '/bin/sh' } as const;

/** The whole argv; throws `unavailable` when a util-linux program it needs is missing on this host. */
export function commandArgv(options: CommandLineOptions): string[] {
  const argv: string[] = [];
  if (options.user) argv.push(...becomeUserArgs(utility('setpriv', 'run commands as another user'), options.user));
  argv.push(...options.prefix);
  const bash = [options.bash, '--noprofile', '--norc', '-c', options.command];
  const { output } = options;
  if (output.kind === 'separate') return [...argv, ...bash];
  // One pipe for both: the order the command wrote in is the order the log shows.
  if (output.kind === 'merged') return [...argv, '/bin/sh', '-c', 'exec "$@" 2>&1', 'toolgate-output', ...bash];
  const stty = utility('stty', 'size a terminal');
  const line = [
    `${quote(stty)} cols ${output.size.cols} rows ${output.size.rows} 2>/dev/null`,
    `export SHELL=${quote(options.callerShell ?? options.bash)}`,
    `exec ${bash.map(quote).join(' ')}`,
  ].join('; ');
  // script (util-linux) runs the line on a new pseudo-terminal: -e passes on its exit status, -q keeps its own notes out.
  return [...argv, utility('script', 'run a command on a terminal'), '-q', '-e', '-c', line, '/dev/null'];
}

/** A word for sh, whatever it holds. */
function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

function utility(name: string, purpose: string): string {
  const path = findUtility(name);
  if (path === undefined)
    throw new ToolError(
      'unavailable',
      `${name} (util-linux) is missing on this runner, and it is needed to ${purpose}; install util-linux.`,
    );
  return path;
}

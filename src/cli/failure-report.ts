// How a failed command ends: its message on stderr and the exit code (1 the server or the network, 2 usage).
import { ToolgateConnectionError, ToolgateError } from '../client/toolgate-error.ts';
import type { CliIo } from './cli-io.ts';
import { UsageError } from './command-line.ts';

export const EXIT_OK = 0;
/** The server answered with an error, a call waits for approval, or the server could not be reached. */
export const EXIT_FAILED = 1;
/** The command line itself is wrong: nothing was sent. */
export const EXIT_USAGE = 2;

/** Reports the failures a command expects; anything else is a bug and keeps its stack. */
export function reportFailure(io: CliIo, error: unknown): number {
  if (error instanceof UsageError) {
    io.err(`toolgate: ${error.message}\n\n${error.usage}`);
    return EXIT_USAGE;
  }
  if (error instanceof ToolgateError) {
    const details = error.details === undefined ? '' : `\n  details: ${JSON.stringify(error.details)}`;
    io.err(`toolgate: ${error.code} (HTTP ${error.status}): ${error.message}${details}\n`);
    return EXIT_FAILED;
  }
  if (error instanceof ToolgateConnectionError) {
    io.err(`toolgate: ${error.message} Is the server running? Point to it with --url or TOOLGATE_URL.\n`);
    return EXIT_FAILED;
  }
  throw error;
}

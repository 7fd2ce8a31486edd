// The toolgate command: reads the command word, runs that command and answers its exit code.
import { processIo, type CliIo } from './cli-io.ts';
import { downloadCommand, uploadCommand } from './archive-commands.ts';
import { callCommand } from './call-command.ts';
import { UsageError, wantsHelp } from './command-line.ts';
import { EXIT_OK, reportFailure } from './failure-report.ts';
import { keysCommand } from './keys-command.ts';
import { logsCommand } from './logs-command.ts';

export const usage = `Usage: toolgate <command> [options]

Commands:
  serve                        run the toolgate server (the default command)
  runner                       run a runner against a server: toolgate runner --url <url> --key-file <file>
                               (or the key in TOOLGATE_RUNNER_KEY)
  keys create|list|revoke      manage API keys
  call <workspace> <tool>      call a tool: toolgate call demo read_file --json '{"path": "a.txt"}'
  download <workspace> [file]  a directory of the workspace as a tar (or .tgz) file, or on stdout
  upload <workspace> <file>    apply a tar (or .tgz) file to the workspace in one commit
  logs <workspace> <processId> follow a process's output until it ends
  help                         show this help

Run toolgate <command> --help for a command's options.

keys, call, download, upload and logs talk to a server given by --url (or TOOLGATE_URL,
default http://127.0.0.1:8787) with the key given by --key (or TOOLGATE_API_KEY). They print
the server's JSON answer on stdout (download: the archive; logs: the output) and errors on
stderr, and exit with
  0  success
  1  the server answered an error (its code and message are on stderr), the call waits
     for approval, or the server could not be reached
  2  a usage error: unknown command, bad flag, bad JSON, missing argument
`;

const serveUsage = `Usage: toolgate serve

Runs the toolgate server, as npm start does. It is configured by environment variables:
PORT (default 8787), HOST (default 127.0.0.1), TOOLGATE_DATA (default ./.toolgate),
TOOLGATE_API_KEY (the first admin key; generated and printed once when unset),
TOOLGATE_RUNNER=off (no in-process runner), and the others in the README's Configuration.
`;

/** Runs a command line; undefined for the commands that keep running (serve, runner). */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number | undefined> {
  const [command = 'serve', ...rest] = argv;
  try {
    switch (command) {
      case 'help':
      case '--help':
      case '-h':
        io.out(usage);
        return EXIT_OK;
      case 'serve':
        if (wantsHelp(rest)) {
          io.out(serveUsage);
          return EXIT_OK;
        }
        if (rest.length > 0)
          throw new UsageError(
            `serve takes no arguments (got ${JSON.stringify(rest[0])}); configure it by environment variables`,
            serveUsage,
          );
        // Imported on demand, so the client commands start without loading the server.
        await (await import('../../functions/node.ts')).main();
        return undefined;
      case 'runner':
        // The runner reads its own flags and prints its own help.
        (await import('../../functions/runner.ts')).main(rest);
        return undefined;
      case 'keys':
        return await keysCommand(rest, io);
      case 'call':
        return await callCommand(rest, io);
      case 'download':
        return await downloadCommand(rest, io);
      case 'upload':
        return await uploadCommand(rest, io);
      case 'logs':
        return await logsCommand(rest, io);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`, usage);
    }
  } catch (error) {
    return reportFailure(io, error);
  }
}

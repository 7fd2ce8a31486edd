// toolgate logs: a process's output on stdout as it is written (the log stream), to the process's end.
import type { CliIo } from './cli-io.ts';
import { parseCommandLine, UsageError, wantsHelp } from './command-line.ts';
import { connect, connectionOptions, connectionUsage } from './connection.ts';
import { EXIT_OK } from './failure-report.ts';

export const logsUsage = `Usage: toolgate logs <workspace> <processId> [--offset <n>]

Writes the process's output to stdout as the process writes it, from the oldest character the
server keeps (or from --offset), until the process ends; then prints its status snapshot as
JSON on stderr. A dropped connection is resumed where it stopped. Ctrl-C stops following; the
process keeps running.
  --offset <n>  the first character to write (a character offset, as bash logs counts them)

${connectionUsage}
Examples:
  toolgate logs demo proc_0123...
  toolgate logs demo proc_0123... --offset 0 | grep ERROR
`;

export async function logsCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(logsUsage);
    return EXIT_OK;
  }
  const { values, positionals } = parseCommandLine(
    { args, options: { ...connectionOptions, offset: { type: 'string' } } },
    logsUsage,
    { names: ['workspace', 'processId'] },
  );
  const [workspace, processId] = positionals as [string, string];
  let offset: number | undefined;
  if (values.offset !== undefined) {
    if (!/^[0-9]{1,15}$/.test(values.offset))
      throw new UsageError(
        `--offset must be a whole number of 0 or more, not ${JSON.stringify(values.offset)}`,
        logsUsage,
      );
    offset = Number(values.offset);
  }
  const client = connect(values, io, logsUsage);
  const follow = client.followLogs(workspace, processId, { offset });
  for (;;) {
    const next = await follow.next();
    if (next.done) {
      io.err(`${JSON.stringify(next.value)}\n`);
      return EXIT_OK;
    }
    io.out(next.value.data);
  }
}

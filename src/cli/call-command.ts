// toolgate call <workspace> <tool>: one tool call through the typed client, its answer on stdout.
import { printJson, type CliIo } from './cli-io.ts';
import { parseCommandLine, parseJsonObject, UsageError, wantsHelp } from './command-line.ts';
import { connect, connectionOptions, connectionUsage } from './connection.ts';
import { EXIT_FAILED, EXIT_OK } from './failure-report.ts';

export const callUsage = `Usage: toolgate call <workspace> <tool> [--json '<arguments>'] [--wait <ms>]

Calls a tool (read_file, write_file, apply_patch, bash, grep, glob) in a workspace and prints the
server's answer: {"result": ...} when the call ran, {"approval": ...} when it waits for one.
  --json <arguments>  the tool's arguments as a JSON object (default {}); '-' reads them from stdin
  --wait <ms>         if the call needs approval, wait up to this long (at most 60000) for the
                      decision and print the call's own outcome

A call still waiting for approval prints {"approval": ...}, says so on stderr and exits 1:
nothing has happened yet. GET /v1/approvals/<id> shows how it ends.

${connectionUsage}
Examples:
  toolgate call demo write_file --json '{"path": "a.txt", "content": "hello\\n"}'
  toolgate call demo read_file --json '{"path": "a.txt"}'
  toolgate call demo bash --json '{"action": "exec", "command": "ls -la"}'
  toolgate call demo grep --json '{"pattern": "TODO", "type": "ts", "outputMode": "content"}'
  toolgate call demo glob --json '{"pattern": "src/**/*.test.ts"}'
`;

export async function callCommand(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) {
    io.out(callUsage);
    return EXIT_OK;
  }
  const { values, positionals } = parseCommandLine(
    { args, options: { ...connectionOptions, json: { type: 'string' }, wait: { type: 'string' } } },
    callUsage,
    { names: ['workspace', 'tool'] },
  );
  const [workspace, tool] = positionals as [string, string];
  if (values.wait !== undefined && !/^\d+$/.test(values.wait))
    throw new UsageError(
      `--wait must be a whole number of milliseconds, not ${JSON.stringify(values.wait)}`,
      callUsage,
    );
  const client = connect(values, io, callUsage);
  const toolArgs = values.json === undefined ? {} : await parseJsonObject(values.json, '--json', io, callUsage);
  const answer = await client.callTool(workspace, tool, toolArgs, {
    waitMs: values.wait === undefined ? undefined : Number(values.wait),
  });
  printJson(io, answer);
  if (answer.approval) {
    const id = answer.approval.id;
    io.err(
      `toolgate: approval_pending: ${tool} in ${workspace} waits for approval ${id} and has not run; an approver decides it ` +
        `with POST /v1/approvals/${id}/decision, and GET /v1/approvals/${id} then shows its outcome.\n`,
    );
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

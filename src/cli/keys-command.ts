// toolgate keys create|list|revoke: API keys through the typed client.
import type { KeyRole, NewKeyBody } from '../client/api-types.ts';
import { printJson, type CliIo } from './cli-io.ts';
import { commaList, parseCommandLine, parseJsonObject, UsageError, wantsHelp } from './command-line.ts';
import { connect, connectionOptions, connectionUsage } from './connection.ts';
import { EXIT_OK } from './failure-report.ts';

export const keysUsage = `Usage: toolgate keys <create|list|revoke> [options]

Manages API keys; creating and revoking them needs an admin key.
  create        create a key and print it with its secret, shown this once
  list          list the keys, without secrets (a key that is not admin lists itself)
  revoke <id>   revoke a key; it is refused from its very next request

Run toolgate keys <subcommand> --help for its options.
`;

const createUsage = `Usage: toolgate keys create --name <name> --role <role> --workspaces <ids> [options]
       toolgate keys create --json '<body>'

Creates an API key and prints it as JSON with its secret (the only time it is shown).
  --name <name>           a name for the key
  --role <role>           agent, approver, admin or runner
  --workspaces <ids>      comma-separated workspace ids, or '*' for every workspace
  --tools <names>         comma-separated tools or bash actions it may call, e.g.
                          read_file,apply_patch,bash:exec (default: every tool)
  --approval-mode <mode>  auto, safe or manual (agent keys default to safe)
  --json <body>           the whole POST /v1/keys body instead of the flags above (rules,
                          quota, rateLimitPerMinute, notifyUrl too); '-' reads it from stdin

${connectionUsage}`;

const listUsage = `Usage: toolgate keys list [--url <url>] [--key <key>]

Prints {"keys": [...]}: every key for an admin key, else the calling key; never secrets.

${connectionUsage}`;

const revokeUsage = `Usage: toolgate keys revoke <key id> [--url <url>] [--key <key>]

Revokes a key (needs an admin key): its next request is refused with 401. Prints nothing.

${connectionUsage}`;

export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = args;
  if (subcommand === undefined) throw new UsageError('keys needs a subcommand: create, list or revoke', keysUsage);
  if (subcommand === '--help' || subcommand === '-h' || subcommand === 'help') {
    io.out(keysUsage);
    return EXIT_OK;
  }
  switch (subcommand) {
    case 'create':
      return createKey(rest, io);
    case 'list':
      return listKeys(rest, io);
    case 'revoke':
      return revokeKey(rest, io);
    default:
      throw new UsageError(`unknown keys subcommand ${JSON.stringify(subcommand)}`, keysUsage);
  }
}

async function createKey(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) return help(io, createUsage);
  const { values } = parseCommandLine(
    {
      args,
      options: {
        ...connectionOptions,
        name: { type: 'string' },
        role: { type: 'string' },
        workspaces: { type: 'string' },
        tools: { type: 'string' },
        'approval-mode': { type: 'string' },
        json: { type: 'string' },
      },
    },
    createUsage,
  );
  const client = connect(values, io, createUsage);
  const flags = (['name', 'role', 'workspaces', 'tools', 'approval-mode'] as const).filter(
    (flag) => values[flag] !== undefined,
  );
  let body: NewKeyBody;
  if (values.json !== undefined) {
    if (flags.length > 0)
      throw new UsageError(
        `give the key either as --json or as flags, not both (--json with ${flags.map((flag) => `--${flag}`).join(', ')})`,
        createUsage,
      );
    // The server checks the body against the contract, so the CLI never holds a second copy of it.
    body = (await parseJsonObject(values.json, '--json', io, createUsage)) as unknown as NewKeyBody;
  } else {
    const missing = (['name', 'role', 'workspaces'] as const).filter((flag) => values[flag] === undefined);
    if (missing.length > 0)
      throw new UsageError(
        `keys create needs ${missing.map((flag) => `--${flag}`).join(', ')} (or --json with the whole body)`,
        createUsage,
      );
    body = {
      name: values.name!,
      role: values.role as KeyRole,
      workspaces: commaList(values.workspaces!),
      ...(values.tools === undefined ? {} : { tools: commaList(values.tools) }),
      ...(values['approval-mode'] === undefined
        ? {}
        : { approvalMode: values['approval-mode'] as NewKeyBody['approvalMode'] }),
    };
  }
  printJson(io, await client.createKey(body));
  return EXIT_OK;
}

async function listKeys(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) return help(io, listUsage);
  const { values } = parseCommandLine({ args, options: connectionOptions }, listUsage);
  printJson(io, await connect(values, io, listUsage).listKeys());
  return EXIT_OK;
}

async function revokeKey(args: string[], io: CliIo): Promise<number> {
  if (wantsHelp(args)) return help(io, revokeUsage);
  const { values, positionals } = parseCommandLine({ args, options: connectionOptions }, revokeUsage, {
    names: ['key id'],
  });
  const id = positionals[0]!;
  await connect(values, io, revokeUsage).revokeKey(id);
  io.err(`toolgate: key ${id} revoked\n`);
  return EXIT_OK;
}

function help(io: CliIo, usage: string): number {
  io.out(usage);
  return EXIT_OK;
}

// Flags and arguments of a command: parsed strictly, so a typo is a usage error (exit 2), never ignored.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { CliIo } from './cli-io.ts';

/** A command line the command cannot run: the message and that command's usage go to stderr. */
export class UsageError extends Error {
  readonly usage: string;

  constructor(message: string, usage: string) {
    super(message);
    this.name = 'UsageError';
    this.usage = usage;
  }
}

/** `--help` or `-h` anywhere before a `--`, so help works even beside flags that would not parse. */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

/** node:util's parseArgs (strict), with its errors turned into usage errors and a bound on positionals. */
export function parseCommandLine<const Config extends ParseArgsConfig>(
  config: Config,
  usage: string,
  positionals: { names: readonly string[]; optional?: number } = { names: [] },
): ReturnType<typeof parseArgs<Config & { strict: true; allowPositionals: true }>> {
  let parsed: ReturnType<typeof parseArgs<Config & { strict: true; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ ...config, strict: true, allowPositionals: true });
  } catch (error) {
    // parseArgs explains a bad flag in its first sentence; the rest is advice about `--`.
    if (error instanceof TypeError && String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(error.message.split('. ')[0]!.replace(/\.$/, ''), usage);
    }
    throw error;
  }
  const required = positionals.names.length - (positionals.optional ?? 0);
  const given = parsed.positionals.length;
  if (given < required)
    throw new UsageError(
      `missing ${positionals.names
        .slice(given, required)
        .map((name) => `<${name}>`)
        .join(' ')}`,
      usage,
    );
  if (given > positionals.names.length)
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals.names.length])}`, usage);
  return parsed;
}

/** A flag's JSON object (`-` reads it from stdin); anything else is a usage error naming the flag. */
export async function parseJsonObject(
  text: string,
  flag: string,
  io: CliIo,
  usage: string,
): Promise<Record<string, unknown>> {
  const source = text === '-' ? await io.readStdin() : text;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`, usage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new UsageError(`${flag} must be a JSON object, like '{"path": "a.txt"}'`, usage);
  return value as Record<string, unknown>;
}

/** A comma-separated flag value as a list, blanks dropped. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

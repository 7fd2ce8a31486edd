// Which server a command talks to, and with which key: flags first, then environment variables.
import { ToolgateClient } from '../client/toolgate-client.ts';
import type { CliIo } from './cli-io.ts';
import { UsageError } from './command-line.ts';
import { readSetting } from '../contract/settings.ts';

/** Where `npm start` listens when nothing else is configured: TOOLGATE_URL's default. */
export const DEFAULT_URL = readSetting({}, 'TOOLGATE_URL', 'cli');

export const connectionOptions = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

export const connectionUsage = `Connection:
  --url <url>     the server (default: $TOOLGATE_URL, else ${DEFAULT_URL})
  --key <key>     the API key (default: $TOOLGATE_API_KEY)
`;

export function connect(flags: { url?: string; key?: string }, io: CliIo, usage: string): ToolgateClient {
  const url = flags.url || readSetting(io.env, 'TOOLGATE_URL', 'cli');
  if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) {
    throw new UsageError(
      `${JSON.stringify(url)} is not an http or https URL; give the server as --url http://host:port`,
      usage,
    );
  }
  const key = flags.key || io.env.TOOLGATE_API_KEY;
  if (!key) throw new UsageError('no API key: pass --key <key> or set TOOLGATE_API_KEY', usage);
  return new ToolgateClient({ url, key });
}

#!/usr/bin/env node
// The toolgate command: `toolgate serve` (the default) runs the embedded server.
import { register } from 'tsx/esm/api';

const usage = `Usage: toolgate [command]

Commands:
  serve      Run the toolgate server (the default). Configured by environment
             variables: PORT, HOST, TOOLGATE_DATA, TOOLGATE_API_KEY, ... (see README).
  runner     Run a runner against a server: toolgate runner --url <url> --key <key>
             (toolgate runner --help for its options).
  help       Show this help.
`;

const [command = 'serve', ...rest] = process.argv.slice(2);
if (command === 'help' || command === '--help' || command === '-h') {
  process.stdout.write(usage);
} else if (command === 'serve') {
  if (rest.includes('--help')) {
    process.stdout.write(usage);
  } else {
    register();
    await import('../functions/node.ts');
  }
} else if (command === 'runner') {
  register();
  await import('../functions/runner.ts');
} else {
  process.stderr.write(`toolgate: unknown command ${JSON.stringify(command)}\n\n${usage}`);
  process.exit(2);
}

// Runs the toolgate command as a user does (node bin/toolgate.js) against a test server.
import { spawn } from 'node:child_process';
import { repoRoot, type ServerProcess } from './server-process.ts';

export interface CommandRun {
  code: number | null;
  /** stdout as bytes (an archive may be written there); `text` decodes it. */
  stdout: Buffer;
  stderr: string;
  text: string;
}

/**
 * Runs `toolgate <args>` with only PATH and HOME from this process, plus `env`; the server's URL
 * and admin key come from TOOLGATE_URL and TOOLGATE_API_KEY unless `env` says otherwise.
 */
export function runToolgate(
  server: Pick<ServerProcess, 'url' | 'key'>,
  args: string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CommandRun> {
  const child = spawn(process.execPath, ['bin/toolgate.js', ...args], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TOOLGATE_URL: server.url,
      TOOLGATE_API_KEY: server.key,
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      const bytes = Buffer.concat(stdout);
      resolve({ code, stdout: bytes, stderr, text: bytes.toString('utf8') });
    });
  });
}

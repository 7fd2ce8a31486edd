// Each file's SHA-256 as a command in the workspace sees it: what the files hold, through the API a user has.
import { expect } from 'vitest';
import type { ServerProcess } from './server-process.ts';

/** Paths (without `./`) to the SHA-256 of each regular file of the workspace; links are not followed. */
export async function fileHashes(server: Pick<ServerProcess, 'call'>, workspace: string): Promise<Map<string, string>> {
  const answer = await server.call('POST', `/v1/workspaces/${workspace}/tools/bash`, {
    action: 'exec',
    command: 'find . -type f -print0 | xargs -0 -r sha256sum',
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.result.exitCode, answer.body.result.stderr).toBe(0);
  const lines = (answer.body.result.stdout as string).split('\n').filter((line) => line !== '');
  return new Map(lines.map((line) => [line.slice(68), line.slice(0, 64)]));
}

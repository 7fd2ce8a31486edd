// Keys for tests: create one through the API and call the API with it.
import { expect } from 'vitest';
import { callApi, type ApiAnswer, type ServerProcess } from './server-process.ts';

export interface TestKey {
  id: string;
  secret: string;
  notifySecret?: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
}

export async function createKey(
  server: Pick<ServerProcess, 'url' | 'call'>,
  body: Record<string, unknown>,
): Promise<TestKey> {
  const answer = await server.call('POST', '/v1/keys', { name: 'test key', ...body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  const { id, secret, notifySecret } = answer.body as { id: string; secret: string; notifySecret?: string };
  return {
    id,
    secret,
    notifySecret,
    call: (method, path, payload, headers) => callApi(server.url, secret, method, path, payload, headers),
  };
}

/** A key of role runner (for every workspace unless told): the runner protocol serves no other role. */
export async function createRunnerKey(
  server: Pick<ServerProcess, 'url' | 'call'>,
  workspaces: string[] = ['*'],
): Promise<TestKey> {
  return createKey(server, { name: 'test runner', role: 'runner', workspaces });
}

// Reading the server's answers: the JSON a call expects, or the contract's error body as ToolgateError.
import { ToolgateError, UNEXPECTED_RESPONSE } from './toolgate-error.ts';

export async function expectJson<T>(response: Response, statuses: number[]): Promise<T> {
  if (!statuses.includes(response.status)) throw await ToolgateError.fromResponse(response);
  return (await readJson(response)) as T;
}

export async function expectEmpty(response: Response): Promise<void> {
  if (response.status !== 204) throw await ToolgateError.fromResponse(response);
}

export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw unexpected(response, text, `the answer (${response.status}) is not JSON`);
  }
}

export function unexpected(response: Response, body: unknown, what: string): ToolgateError {
  return new ToolgateError({
    status: response.status,
    code: UNEXPECTED_RESPONSE,
    message: `${response.url || 'The server'}: ${what}.`,
    body,
  });
}

// How a tool call through the typed client ends, for assertions: its result, or its status and code.
import { expect } from 'vitest';
import { ToolgateError, type ToolAnswer } from '../../src/client/index.ts';

/** The result of a call that ran; a call that waits for approval fails the test. */
export function resultOf<Result>(answer: ToolAnswer<Result>): Result {
  expect(answer.approval, 'the call waits for approval').toBeUndefined();
  return answer.result!;
}

/**
 * [status, code]: [200, undefined] when the call ran, [202, 'approval_pending'] when it waits for
 * approval, else the error's HTTP status and contract code.
 */
export async function outcome(call: Promise<unknown>): Promise<[number, string | undefined]> {
  try {
    const answer = await call;
    const pending =
      typeof answer === 'object' && answer !== null && (answer as { approval?: unknown }).approval !== undefined;
    return pending ? [202, 'approval_pending'] : [200, undefined];
  } catch (error) {
    if (error instanceof ToolgateError) return [error.status, error.code];
    throw error;
  }
}

/** The error a call fails with; a call that succeeds fails the test. */
export async function failure(call: Promise<unknown>): Promise<ToolgateError> {
  const answer = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in answer)) throw new Error(`expected the call to fail, it answered ${JSON.stringify(answer.value)}`);
  if (!(answer.error instanceof ToolgateError)) throw answer.error;
  return answer.error;
}

// Turns any thrown value into the contract's error body and status; stack traces never leave.
import { errorBody, errorStatus, INTERNAL_MESSAGE, isToolError } from '../core/errors.ts';

export function errorResponse(error: unknown, onInternal: (error: unknown) => void): Response {
  if (isToolError(error)) {
    return Response.json(errorBody(error.code, error.message, error.details), { status: errorStatus[error.code] });
  }
  onInternal(error);
  return Response.json(errorBody('internal', INTERNAL_MESSAGE), { status: 500 });
}

// Turns any thrown value into the contract's error body and status; stack traces never leave.
import { errorStatus, isToolError, type ErrorCode, type ErrorDetails } from '../core/errors.ts';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetails): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

export function errorResponse(error: unknown, onInternal: (error: unknown) => void): Response {
  if (isToolError(error)) {
    return Response.json(errorBody(error.code, error.message, error.details), { status: errorStatus[error.code] });
  }
  onInternal(error);
  return Response.json(errorBody('internal', 'The server failed unexpectedly; retry, and report it if it persists.'), { status: 500 });
}

// The one table of error codes and their HTTP statuses, and the error every layer throws.

export const errorStatus = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  tool_not_allowed: 403,
  not_found: 404,
  path_outside_workspace: 403,
  path_denied: 403,
  symlink_loop: 400,
  is_directory: 400,
  binary_file: 415,
  already_exists: 409,
  conflict: 409,
  patch_invalid: 400,
  patch_conflict: 409,
  approval_rejected: 403,
  payload_too_large: 413,
  rate_limited: 429,
  quota_exceeded: 402,
  timeout: 504,
  unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export type ErrorDetails = Record<string, unknown>;

/** An expected failure with a contract code and a message a model can act on. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

/** The message of every `internal` error: a failure's own text and stack never leave the server. */
export const INTERNAL_MESSAGE = 'The server failed unexpectedly; retry, and report it if it persists.';

/** The contract's error body; `details` only when there are some. */
export function errorBody(code: ErrorCode, message: string, details?: ErrorDetails): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

export function isToolError(error: unknown): error is ToolError {
  return error instanceof ToolError;
}

// A tool call's answer as it is sent: the status and JSON of a result, an error or a concluded approval.
import { STOP_REASON, type Approval } from '../approvals/approval-store.ts';
import { errorBody, errorStatus, INTERNAL_MESSAGE, isToolError, type ErrorCode } from '../core/errors.ts';

/** An answer ready to send: the status, the JSON text and extra headers. */
export interface CallAnswer {
  status: number;
  json: string;
  headers: Record<string, string>;
}

/** What the call answers once its approval concluded: the result, the call's error, or the rejection. */
export function finalAnswer(approval: Approval): CallAnswer {
  if (approval.status === 'rejected') {
    const error = approval.error!;
    return jsonAnswer(errorStatus.approval_rejected, {
      error: { code: 'approval_rejected', message: error.message, details: { approvalId: approval.id, reason: approval.reason ?? null, stopReason: STOP_REASON } },
      stopReason: STOP_REASON,
    });
  }
  if (approval.error !== undefined) {
    const code = (approval.error.code in errorStatus ? approval.error.code : 'unavailable') as ErrorCode;
    return jsonAnswer(errorStatus[code], { error: { code, message: approval.error.message, details: { approvalId: approval.id, ...(approval.error.details as object | undefined) } } });
  }
  return jsonAnswer(200, { result: approval.result });
}

export function errorAnswer(error: unknown): CallAnswer {
  if (!isToolError(error)) return jsonAnswer(500, errorBody('internal', INTERNAL_MESSAGE));
  const headers: Record<string, string> = {};
  if (error.code === 'rate_limited' && typeof error.details?.retryAfterSeconds === 'number') headers['retry-after'] = String(error.details.retryAfterSeconds);
  return { ...jsonAnswer(errorStatus[error.code], errorBody(error.code, error.message, error.details)), headers };
}

export function jsonAnswer(status: number, body: unknown): CallAnswer {
  return { status, json: JSON.stringify(body), headers: {} };
}

/** The UTF-8 bytes of an answer's text, as metered. */
export function byteLength(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

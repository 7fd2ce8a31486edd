// What a call answers once its approval concluded: the result, the call's error, or the rejection.
import { jsonAnswer, type CallAnswer } from '../core/call-answer.ts';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import { STOP_REASON, type Approval } from './approval-store.ts';

export function finalAnswer(approval: Approval): CallAnswer {
  if (approval.status === 'rejected') {
    const error = approval.error!;
    return jsonAnswer(errorStatus.approval_rejected, {
      error: {
        code: 'approval_rejected',
        message: error.message,
        details: { approvalId: approval.id, reason: approval.reason ?? null, stopReason: STOP_REASON },
      },
      stopReason: STOP_REASON,
    });
  }
  if (approval.error !== undefined) {
    const code = (approval.error.code in errorStatus ? approval.error.code : 'unavailable') as ErrorCode;
    return jsonAnswer(errorStatus[code], {
      error: {
        code,
        message: approval.error.message,
        details: { approvalId: approval.id, ...(approval.error.details as object | undefined) },
      },
    });
  }
  return jsonAnswer(200, { result: approval.result });
}

/** Rejected, or approved and run: nothing more will happen to it. */
export function concluded(approval: Approval | undefined): boolean {
  return (
    approval !== undefined &&
    (approval.status === 'rejected' ||
      (approval.status === 'approved' && (approval.result !== undefined || approval.error !== undefined)))
  );
}

// The approval routes as the OpenAPI document lists them, the decision's body taken from the contract.
import { approvalStatuses, decisionInput } from '../contract/http-requests.ts';
import { jsonBody, type Operation } from './openapi-types.ts';
import { approvalStreamOperation } from './stream-operations.ts';

export function approvalOperations(): Operation[] {
  const approvalId = { id: 'The approval id.' };
  return [
    {
      method: 'get',
      path: '/v1/approvals',
      tag: 'approvals',
      operationId: 'listApprovals',
      summary: 'List approvals: an agent key sees its own calls, approvers and admins those of their workspaces',
      query: [
        {
          name: 'status',
          description: 'Only approvals in this status.',
          schema: { type: 'string', enum: [...approvalStatuses] },
        },
        {
          name: 'limit',
          description: 'At most this many (default 100).',
          schema: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      ],
      answers: { 200: { description: 'The approvals, newest first.', schema: 'ApprovalList' } },
      errors: ['invalid_argument', 'forbidden'],
    },
    approvalStreamOperation(),
    {
      method: 'get',
      path: '/v1/approvals/{id}',
      tag: 'approvals',
      operationId: 'getApproval',
      summary: 'Read an approval',
      pathParams: approvalId,
      answers: { 200: { description: 'The approval.', schema: 'Approval' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/approvals/{id}/decision',
      tag: 'approvals',
      operationId: 'decideApproval',
      summary: 'Approve (the call runs once) or reject (it never runs); approver or admin keys',
      pathParams: approvalId,
      body: jsonBody(decisionInput),
      answers: {
        200: { description: 'The approval, decided; after approve it holds the result or error.', schema: 'Approval' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
    },
  ];
}

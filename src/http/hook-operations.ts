// The webhook routes as the OpenAPI document lists them, their schemas taken from the routes.
import { hookInput, TIMESTAMP_HEADER, TIMESTAMP_WINDOW_SECONDS } from '../contract/http-requests.ts';
import type { ErrorCode } from '../core/errors.ts';
import { hookDeliveryInput } from '../contract/http-requests.ts';
import { SIGNATURE_HEADERS } from '../hooks/hook-signature.ts';
import { WORKSPACE_ID_PATTERN } from '../workspace/workspaces.ts';
import { DELIVERY_ID_HEADERS } from './hook-routes.ts';
import { callErrors, jsonBody, type Operation, type Parameter } from './openapi-types.ts';

const hookId = { hookId: `The hook id (${WORKSPACE_ID_PATTERN.source}).` };

/** What a delivery may fail with: apply_patch's codes, as the hook's owner key calls it. */
const deliveryErrors: ErrorCode[] = [
  'unauthorized',
  ...callErrors,
  'path_outside_workspace',
  'path_denied',
  'symlink_loop',
  'is_directory',
  'binary_file',
  'conflict',
  'patch_invalid',
  'patch_conflict',
];

const signature = (name: string): Parameter => ({
  name,
  description: `sha256= and the 64 lowercase hex digits of the HMAC-SHA256 (key: the hook secret) of the raw body, or of "<timestamp>.<raw body>" with ${TIMESTAMP_HEADER}. One of the signature headers is required; each one sent must verify.`,
  schema: { type: 'string', pattern: '^sha256=[0-9a-f]{64}$' },
});

export function hookOperations(): Operation[] {
  return [
    {
      method: 'put',
      path: '/v1/hooks/{hookId}',
      tag: 'hooks',
      operationId: 'putHook',
      summary:
        'Configure a webhook (admin): its secret, the workspace its deliveries patch, checkpoints, whether deliveries must be timestamped',
      description:
        'Deliveries run as the admin key that configures the hook; configuring it again replaces the secret, the workspace, the owner and the settings. ' +
        `With requireTimestamp, a delivery without ${TIMESTAMP_HEADER} (within ${TIMESTAMP_WINDOW_SECONDS} s, signed with the body) answers 401 and applies nothing.`,
      pathParams: hookId,
      body: jsonBody(hookInput),
      answers: { 200: { description: 'Replaced.', schema: 'Hook' }, 201: { description: 'Created.', schema: 'Hook' } },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/hooks',
      tag: 'hooks',
      operationId: 'listHooks',
      summary: 'The webhooks of the workspaces this admin key sees (never their secrets)',
      answers: { 200: { description: 'The hooks, by id.', schema: 'HookList' } },
      errors: ['forbidden'],
    },
    {
      method: 'get',
      path: '/v1/hooks/{hookId}',
      tag: 'hooks',
      operationId: 'getHook',
      summary: 'One webhook (admin), without its secret',
      pathParams: hookId,
      answers: { 200: { description: 'The hook.', schema: 'Hook' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'delete',
      path: '/v1/hooks/{hookId}',
      tag: 'hooks',
      operationId: 'deleteHook',
      summary: 'Remove a webhook (admin); its deliveries are then refused as a wrong signature is',
      pathParams: hookId,
      answers: { 204: { description: 'Removed.' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'post',
      path: '/v1/hooks/{hookId}',
      tag: 'hooks',
      operationId: 'deliverHook',
      summary:
        "A webhook delivery: its patch is applied with apply_patch as the hook's owner key; no API key, the signature authenticates it",
      description:
        'An unknown hook answers 401 exactly as a wrong signature does. With a delivery id, a repeated delivery (kept at least 7 days) applies nothing and answers ' +
        'what the first one answered, with X-Toolgate-Replayed: true; a first answer of 429 or 503, or a refusal because the owner key was revoked, is not kept.',
      public: true,
      pathParams: hookId,
      headers: [
        ...SIGNATURE_HEADERS.map(signature),
        {
          name: TIMESTAMP_HEADER,
          description: `Seconds since the epoch, signed with the body; must be within ${TIMESTAMP_WINDOW_SECONDS} s of the server's clock. Optional, unless the hook was configured with requireTimestamp.`,
          schema: { type: 'string', pattern: '^[0-9]{1,12}$' },
        },
        ...DELIVERY_ID_HEADERS.map((name) => ({
          name,
          description: 'Optional: the delivery id, its idempotency key (the first of these present).',
          schema: { type: 'string', maxLength: 200 },
        })),
      ],
      body: jsonBody(hookDeliveryInput),
      answers: {
        200: { description: 'The patch was applied.', schema: 'HookDeliveryAnswer' },
        202: {
          description: "The owner key's policy holds the patch for approval; no checkpoint follows it.",
          schema: 'ApprovalPending',
        },
      },
      errors: deliveryErrors,
    },
  ];
}

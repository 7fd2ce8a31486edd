// The key and usage routes as the OpenAPI document lists them: who may call, and what their calls cost.
import { keyInput, usageGroups } from '../contract/http-requests.ts';
import { jsonBody, type Operation } from './openapi-types.ts';

export function accountOperations(): Operation[] {
  return [
    {
      method: 'post',
      path: '/v1/keys',
      tag: 'keys',
      operationId: 'createKey',
      summary: "Create a key (admin) whose scope lies within the creator's",
      body: jsonBody(keyInput),
      answers: { 201: { description: 'The key with its secret, shown this once.', schema: 'KeyCreated' } },
      errors: ['invalid_argument', 'forbidden', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/keys',
      tag: 'keys',
      operationId: 'listKeys',
      summary:
        'List keys without secrets: an admin sees the keys whose scope lies within its own, any other key itself',
      answers: { 200: { description: 'The keys.', schema: 'KeyList' } },
      errors: [],
    },
    {
      method: 'delete',
      path: '/v1/keys/{id}',
      tag: 'keys',
      operationId: 'revokeKey',
      summary: "Revoke a key at once (admin; a key whose scope lies within the admin's)",
      pathParams: { id: 'The key id.' },
      answers: { 204: { description: 'Revoked.' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/usage',
      tag: 'usage',
      operationId: 'getUsage',
      summary: "Usage of the calling key's tool calls (an admin's: every call on the workspaces in its scope)",
      query: [
        {
          name: 'from',
          description: 'ISO 8601 time or milliseconds since the epoch (default: the beginning).',
          schema: { type: 'string' },
        },
        {
          name: 'to',
          description: 'ISO 8601 time or milliseconds since the epoch (default: now).',
          schema: { type: 'string' },
        },
        {
          name: 'groupBy',
          description: 'Group rows by this (default tool; bash per action).',
          schema: { type: 'string', enum: [...usageGroups] },
        },
        { name: 'keyId', description: "Admin keys: one key's usage only.", schema: { type: 'string' } },
      ],
      answers: { 200: { description: 'Totals per group.', schema: 'Usage' } },
      errors: ['invalid_argument', 'forbidden'],
    },
  ];
}

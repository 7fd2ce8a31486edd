// The workspace and file-listing routes as the OpenAPI document lists them, their bodies taken from the contract.
import { forkRequest, workspaceSettings } from '../contract/http-requests.ts';
import { jsonBody, type Operation } from './openapi-types.ts';

export function workspaceOperations(): Operation[] {
  const settings = jsonBody(workspaceSettings);
  return [
    {
      method: 'put',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'putWorkspace',
      summary: 'Create or confirm a workspace',
      description:
        'The body is optional; excludedPaths are root-relative prefixes that writes and runners may not touch. Any key in scope may create a workspace or confirm one; ' +
        "changing an existing workspace's settings needs an admin key (403 forbidden, nothing changed).",
      body: { ...settings, required: false },
      answers: {
        200: { description: 'It existed.', schema: 'WorkspaceInfo' },
        201: { description: 'Created.', schema: 'WorkspaceInfo' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'payload_too_large'],
    },
    {
      method: 'post',
      path: '/v1/workspaces/{ws}/fork',
      tag: 'workspaces',
      operationId: 'forkWorkspace',
      summary: 'Fork a workspace: a new one with the same files, links, settings and checkpoints',
      description:
        'No content is copied: the fork shares it, and later changes to either never show in the other. ' +
        "The key's scope must hold both workspaces: the source (else 404) and the new one (else 403).",
      body: jsonBody(forkRequest),
      answers: { 201: { description: 'The new workspace.', schema: 'WorkspaceInfo' } },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'getWorkspace',
      summary: 'Describe a workspace',
      answers: { 200: { description: 'The workspace.', schema: 'WorkspaceInfo' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'delete',
      path: '/v1/workspaces/{ws}',
      tag: 'workspaces',
      operationId: 'deleteWorkspace',
      summary: 'Delete a workspace with its files, processes and logs (admin)',
      answers: { 204: { description: 'Deleted.' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/files',
      tag: 'workspaces',
      operationId: 'listFiles',
      summary: 'List files',
      query: [
        { name: 'prefix', description: 'The directory to list (default the root).', schema: { type: 'string' } },
        {
          name: 'recursive',
          description: 'List the whole tree below it (default: direct children only).',
          schema: { type: 'string', enum: ['true', 'false'] },
        },
        {
          name: 'limit',
          description: 'At most this many entries (default and maximum 10,000).',
          schema: { type: 'integer', minimum: 1, maximum: 10_000 },
        },
        {
          name: 'cursor',
          description: 'The nextCursor of the page before: the entries after it.',
          schema: { type: 'string' },
        },
      ],
      answers: {
        200: { description: 'A page of entries, in path order; nextCursor while more remain.', schema: 'FileList' },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'path_outside_workspace', 'symlink_loop'],
    },
  ];
}

// The history routes as the OpenAPI document lists them, their schemas taken from the contract.
import { z } from 'zod';
import type { ErrorCode } from '../core/errors.ts';
import {
  checkpointListSchema,
  checkpointSchema,
  diffSchema,
  importSchema,
  restoreSchema,
} from '../contract/http-answers.ts';
import { checkpointInput, importInput, restoreInput } from '../contract/http-requests.ts';
import { jsonBody, jsonSchemaOf, type Operation } from './openapi-types.ts';

const answer = (description: string, schema: z.ZodType) => ({ description, schema: jsonSchemaOf(schema, 'output') });
const common: ErrorCode[] = ['invalid_argument', 'forbidden', 'not_found'];

export function historyOperations(): Operation[] {
  return [
    {
      method: 'post',
      path: '/v1/workspaces/{ws}/checkpoints',
      tag: 'history',
      operationId: 'createCheckpoint',
      summary: 'Checkpoint the workspace as a git commit',
      description: 'Empty directories are left out (git holds none). The body is optional.',
      body: jsonBody(checkpointInput, false),
      answers: { 201: answer('The checkpoint; its id is the commit id.', checkpointSchema) },
      errors: [...common, 'conflict', 'payload_too_large', 'unavailable'],
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/checkpoints',
      tag: 'history',
      operationId: 'listCheckpoints',
      summary: 'List checkpoints, newest first',
      query: [
        {
          name: 'limit',
          description: 'At most this many (default 1000).',
          schema: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      ],
      answers: { 200: answer('The checkpoints.', checkpointListSchema) },
      errors: common,
    },
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/diff',
      tag: 'history',
      operationId: 'diffCheckpoint',
      summary: 'The unified diff from a checkpoint to the workspace now, or to another checkpoint',
      query: [
        { name: 'from', description: 'The checkpoint id.', schema: { type: 'string', pattern: '^[0-9a-f]{40}$' } },
        {
          name: 'to',
          description: 'Another checkpoint id: the diff ends there instead of at the workspace now.',
          schema: { type: 'string', pattern: '^[0-9a-f]{40}$' },
        },
      ],
      answers: {
        200: answer(
          'The diff; binary files get a "Binary files ... differ" line, symlinks show their targets.',
          diffSchema,
        ),
      },
      errors: [...common, 'unavailable'],
    },
    {
      method: 'post',
      path: '/v1/workspaces/{ws}/restore',
      tag: 'history',
      operationId: 'restoreCheckpoint',
      summary: 'Make the workspace equal a checkpoint, in one commit',
      description:
        'Needs a key that may call write_file and apply_patch without approval. Directories the checkpoint does not need are removed.',
      body: jsonBody(restoreInput),
      answers: { 200: answer('Restored.', restoreSchema) },
      errors: [...common, 'conflict', 'payload_too_large', 'unavailable'],
    },
    {
      method: 'post',
      path: '/v1/workspaces/{ws}/import',
      tag: 'history',
      operationId: 'importRepository',
      summary: 'Fill an empty workspace from a git remote over smart HTTP, then checkpoint it',
      description:
        'Shallow (depth 1) unless depth is given. Needs a key that may call write_file and apply_patch without approval. Over a limit ' +
        '(TOOLGATE_IMPORT_MAX_FILES, TOOLGATE_IMPORT_MAX_BYTES, TOOLGATE_MAX_FILE_BYTES) it answers 413 naming it, and nothing is imported. ' +
        'A remote that refuses access (401/403) answers forbidden naming the URL without credentials.',
      body: jsonBody(importInput),
      answers: { 201: answer('Imported and checkpointed.', importSchema) },
      errors: [...common, 'conflict', 'payload_too_large', 'timeout', 'unavailable'],
    },
  ];
}

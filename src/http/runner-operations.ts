// The runner protocol's routes as the OpenAPI document lists them, their schemas taken from the contract.
import { z } from 'zod';
import {
  blobBatchRequestSchema,
  blobPieceAnswerSchema,
  blobPieceQuerySchema,
  blobUploadAnswerSchema,
  blobUploadQuerySchema,
  exitReportSchema,
  heartbeatReportSchema,
  leaseRequestSchema,
  outputQuerySchema,
  outputReportSchema,
  startedReportSchema,
  syncReportSchema,
} from '../contract/runner-protocol.ts';
import { jsonBody, jsonSchemaOf, queryParameters, type JsonSchema, type Operation } from './openapi-types.ts';

/** The runner protocol (served only where the app has durable processes). */
export function runnerOperations(): Operation[] {
  const processId = { id: 'The process id of the leased job.' };
  const report = (path: string, operationId: string, summary: string, body: z.ZodType, answer: string): Operation => ({
    method: 'post',
    path: `/v1/runner/workspaces/{ws}/processes/{id}/${path}`,
    tag: 'runner',
    operationId,
    summary,
    pathParams: processId,
    body: jsonBody(body),
    answers: { 200: { description: 'Recorded.', schema: answer } },
    errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large'],
  });
  const textQuery = jsonSchemaOf(outputQuerySchema, 'input') as { properties: Record<string, JsonSchema> };
  const output: Operation = {
    ...report(
      'output',
      'runnerOutput',
      'Append output (JSON, or UTF-8 text/plain with token, offset and skipped in the query)',
      outputReportSchema,
      'OutputEnd',
    ),
    body: {
      content: {
        ...jsonBody(outputReportSchema).content,
        'text/plain': { type: 'string', description: 'The output text.' },
      },
      required: true,
    },
    query: Object.entries(textQuery.properties).map(([name, schema]) => ({
      name,
      description: 'text/plain bodies only (token is required there).',
      schema,
    })),
  };
  return [
    {
      method: 'post',
      path: '/v1/runner/lease',
      tag: 'runner',
      operationId: 'runnerLease',
      summary: "Lease the next job of a workspace in the runner key's scope, waiting up to waitMs for one",
      body: jsonBody(leaseRequestSchema),
      answers: {
        200: { description: 'A job, leased to this runner.', schema: 'Lease' },
        204: { description: 'No job.' },
      },
      errors: ['invalid_argument', 'forbidden', 'payload_too_large'],
    },
    {
      method: 'get',
      path: '/v1/runner/workspaces/{ws}/manifest',
      tag: 'runner',
      operationId: 'runnerManifest',
      summary: "A workspace's manifest at its current version (under a live lease of this key on one of its jobs)",
      answers: { 200: { description: 'The manifest.', schema: 'Manifest' } },
      errors: ['forbidden', 'not_found'],
    },
    {
      method: 'get',
      path: '/v1/runner/workspaces/{ws}/blobs/{hash}',
      tag: 'runner',
      operationId: 'runnerBlob',
      summary: 'One blob by its SHA-256',
      pathParams: { hash: 'The blob id: 64 lowercase hex digits.' },
      answers: { 200: { description: 'The content.', contentType: 'application/octet-stream' } },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'unavailable'],
    },
    {
      method: 'post',
      path: '/v1/runner/workspaces/{ws}/blobs',
      tag: 'runner',
      operationId: 'runnerBlobs',
      summary: 'Many blobs in one binary answer',
      body: jsonBody(blobBatchRequestSchema),
      answers: {
        200: {
          description:
            'For each distinct id in the order asked: its 64 hex digits, its length as 8 bytes big-endian, then its bytes.',
          contentType: 'application/octet-stream',
        },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'payload_too_large', 'unavailable'],
    },
    report('started', 'runnerStarted', 'The command started', startedReportSchema, 'Started'),
    output,
    report(
      'heartbeat',
      'runnerHeartbeat',
      'Renew the lease; answers pending stdin and any stop request, with waitMs as soon as one is written',
      heartbeatReportSchema,
      'Heartbeat',
    ),
    {
      method: 'put',
      path: '/v1/runner/workspaces/{ws}/processes/{id}/blobs/{hash}',
      tag: 'runner',
      operationId: 'runnerUploadPiece',
      summary: 'Upload a blob, or one piece of it, ahead of the sync that names it',
      description:
        'The body is raw bytes at `offset` of a blob of `size` bytes whose SHA-256 is `hash`; each piece fits the request body limit ' +
        '(TOOLGATE_MAX_BODY_BYTES), and pieces go in order, each at the `received` of the answer before (a piece already held changes nothing). ' +
        'Pieces are staged in the object store; once the last is in, the blob is stored if its SHA-256 is `hash` (else 400, and nothing is stored). ' +
        'A `size` over TOOLGATE_MAX_FILE_BYTES answers 413 and stores nothing. Needs the live lease of the job, presented by the key that holds it. ' +
        "Pieces of an upload that never completes are removed with the job's sync, or by the workspace's next upload once the job has ended.",
      pathParams: { ...processId, hash: 'The blob id: the SHA-256 of the whole content, 64 lowercase hex digits.' },
      query: queryParameters(blobPieceQuerySchema, {
        token: "Required: the lease's fencing token.",
        offset: 'Required: where this piece starts in the blob.',
        size: 'Required: the size of the whole blob in bytes.',
      }),
      body: {
        content: {
          'application/octet-stream': {
            type: 'string',
            contentMediaType: 'application/octet-stream',
            description: 'The bytes of the piece.',
          },
        },
        required: true,
      },
      answers: {
        200: {
          description: 'What the server now holds of the blob.',
          schema: jsonSchemaOf(blobPieceAnswerSchema, 'output'),
        },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large', 'unavailable'],
    },
    {
      method: 'post',
      path: '/v1/runner/workspaces/{ws}/processes/{id}/blobs',
      tag: 'runner',
      operationId: 'runnerUploadBlobs',
      summary: 'Upload many small blobs in one request, ahead of the sync that names them',
      description:
        'The body frames each blob as the blob batch answer does: its id as 64 hex digits, its length as 8 bytes big-endian, then its bytes. ' +
        'Every id is checked against its SHA-256 before any blob is stored: one wrong id answers 400 and stores none. A blob over TOOLGATE_MAX_FILE_BYTES answers 413.',
      pathParams: processId,
      query: queryParameters(blobUploadQuerySchema, { token: "Required: the lease's fencing token." }),
      body: {
        content: {
          'application/octet-stream': {
            type: 'string',
            contentMediaType: 'application/octet-stream',
            description: 'The framed blobs.',
          },
        },
        required: true,
      },
      answers: {
        200: { description: 'The blobs are stored.', schema: jsonSchemaOf(blobUploadAnswerSchema, 'output') },
      },
      errors: ['invalid_argument', 'forbidden', 'not_found', 'conflict', 'payload_too_large', 'unavailable'],
    },
    {
      ...report(
        'sync',
        'runnerSync',
        "Commit the command's changes to the workspace in one conditional commit",
        syncReportSchema,
        'Sync',
      ),
      description:
        'A write carries its content inline (contentBase64) or names a blob uploaded before by this job (blob and size). ' +
        'A file over TOOLGATE_MAX_FILE_BYTES is not kept and is named in conflicts; a write naming a blob that is not stored is skipped.',
    },
    report('exit', 'runnerExit', 'The command ended', exitReportSchema, 'Exit'),
  ];
}

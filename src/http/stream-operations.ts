// The Server-Sent Events routes as the OpenAPI document lists them: a process's log, and the approvals feed.
import type { Operation } from './openapi-types.ts';

const eventStream = { type: 'string', description: 'A text/event-stream body.' };

/** The log stream (served where bash is: the same homes as the runner protocol). */
export function logStreamOperations(): Operation[] {
  return [
    {
      method: 'get',
      path: '/v1/workspaces/{ws}/processes/{id}/logs/stream',
      tag: 'tools',
      operationId: 'streamProcessLogs',
      summary: "Follow a process's output as Server-Sent Events, from an offset to its exit",
      description:
        'Events: `output` (id: the offset after the chunk; data: {"data", "offset"}, with "truncated": true when the ring ' +
        'buffer had dropped the offset asked for and the chunk starts at the oldest one held), then one `exit` (id: the end ' +
        'offset; data: the snapshot bash status answers), after which the stream ends. A comment after ' +
        'TOOLGATE_STREAM_KEEPALIVE_MS (15 s) of quiet keeps an idle stream open. Last-Event-ID, when present, wins over offset (an EventSource resends the URL it opened). Scope, ' +
        'allowlist (bash or bash:logs), rate limit and quota as for bash logs; a policy that asks for approval of logs is ' +
        'refused (403 forbidden), as a stream cannot wait for one. One stream is one bash:logs call, its usage record ' +
        'written when it ends. A process deleted while streamed, or the key revoked, ends the stream with an `error` event ' +
        '(data: an error body).',
      pathParams: { id: 'The process id (bash start or list gives it).' },
      query: [
        {
          name: 'offset',
          description: 'The first character to send (default: the oldest the log holds); past the end, the end.',
          schema: { type: 'integer', minimum: 0 },
        },
      ],
      headers: [
        {
          name: 'Last-Event-ID',
          description: 'The id of the last event received: the stream resumes at that offset.',
          schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
        },
      ],
      answers: { 200: { description: 'The events.', contentType: 'text/event-stream', schema: eventStream } },
      errors: ['invalid_argument', 'forbidden', 'tool_not_allowed', 'not_found', 'rate_limited', 'quota_exceeded'],
    },
  ];
}

export function approvalStreamOperation(): Operation {
  return {
    method: 'get',
    path: '/v1/approvals/stream',
    tag: 'approvals',
    operationId: 'streamApprovals',
    summary: 'Follow approvals as Server-Sent Events as they are created and decided',
    description:
      'One `approval` event (data: the approval object, as GET /v1/approvals/{id} answers it) each time an approval the ' +
      'key may see is created, decided, run or expired; the same visibility as GET /v1/approvals. Nothing from before ' +
      'the stream opened is sent: list approvals after connecting (and after each reconnection). A comment after ' +
      'TOOLGATE_STREAM_KEEPALIVE_MS (15 s) of quiet keeps an idle stream open; the key revoked ends the stream with an ' +
      '`error` event.',
    answers: { 200: { description: 'The events.', contentType: 'text/event-stream', schema: eventStream } },
    errors: ['forbidden'],
  };
}

// A response body sent on the Node home straight to the socket, each chunk given back to be written again once the socket has sent it.
import { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { BodyPieces, ChunkedAnswer } from '../core/body-pieces.ts';

/**
 * Chunks kept for reuse at most: as many as a socket holds before it asks the sender to wait,
 * and a few more.
 */
const MAX_FREE_CHUNKS = 8;

/**
 * Answers the request whose hono bindings are `env` with `answer`, written to its Node response
 * here rather than by hono from a stream, so that each chunk the body made is known to be sent
 * (its write's callback) and is zeroed and given to the body again: a download of 7.7 MB made 60
 * chunks of new memory, whose page faults and the collections they brought on were half the
 * server's work (see ChunkedBody). Undefined when `env` holds no Node response not yet begun
 * (then the route answers a stream as usual). A body that fails once its head is sent ends the
 * connection, as a stream's failure does, and is told to `onError`.
 */
export function sendNodeBody(
  env: unknown,
  answer: ChunkedAnswer,
  onError?: (error: unknown) => void,
): Response | undefined {
  const outgoing = (env as { outgoing?: unknown } | undefined)?.outgoing;
  if (!(outgoing instanceof ServerResponse) || outgoing.headersSent) return undefined;
  const free: Uint8Array[] = [];
  const { chunkBytes } = answer.body;
  const body = answer.body.make(() => free.pop() ?? new Uint8Array(chunkBytes));
  const length = body.byteLength;
  outgoing.writeHead(
    answer.status,
    length === undefined ? answer.headers : { ...answer.headers, 'content-length': String(length) },
  );
  void send(outgoing, body, free, onError);
  return RESPONSE_ALREADY_SENT;
}

async function send(
  outgoing: ServerResponse,
  body: BodyPieces,
  free: Uint8Array[],
  onError: ((error: unknown) => void) | undefined,
): Promise<void> {
  const stop = () => body.stop();
  outgoing.once('close', stop);
  const write = (bytes: Uint8Array, chunk: Uint8Array | undefined) => {
    if (chunk === undefined) {
      outgoing.write(bytes);
      return;
    }
    outgoing.write(bytes, (error) => {
      if (error !== null && error !== undefined) return;
      if (free.length >= MAX_FREE_CHUNKS) return;
      chunk.fill(0, 0, bytes.byteLength);
      free.push(chunk);
    });
  };
  try {
    // A response gone (the client left) is not pulled for again.
    while (!outgoing.destroyed) {
      if (!(await body.pull(write))) {
        outgoing.end();
        return;
      }
      if (outgoing.writableNeedDrain) await drained(outgoing);
    }
  } catch (error) {
    onError?.(error);
    outgoing.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    outgoing.off('close', stop);
  }
}

/** Once the response can take more, or is gone. */
function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off('drain', done);
      outgoing.off('close', done);
      resolve();
    };
    outgoing.on('drain', done);
    outgoing.on('close', done);
  });
}

// A request body of a declared length read on the Node home straight from the socket into memory lent for it.
import { IncomingMessage } from 'node:http';
import type { LentBody } from '../http/app-deps.ts';

/** Bodies up to this large leave their memory for the next body once given back. */
const KEPT_BODY_BYTES = 16 * 1024 * 1024;
/** Memory is taken in steps of this many bytes, so memory kept fits the next bodies of about its size. */
const BODY_STEP = 1024 * 1024;

/** Memory of a body given back, for the next one: one at a time (a second body at once gets its own). */
let spare: ArrayBuffer | undefined;

/**
 * The body of the request whose hono bindings are `env`, read whole into memory of its declared
 * `length` as the socket delivers it; undefined when `env` holds no Node request whose body is still
 * unread (then the route reads `Request` as usual). `Request.arrayBuffer()` on @hono/node-server
 * joins the chunks into one buffer and copies that into another: for a body of megabytes, two
 * arrays of memory never touched before, which cost this VM several times the copies (page faults,
 * about 3 ms a MiB), an archive's 5 MB about 50 ms of CPU an upload by profile. The memory is
 * lent: once nothing reads the bytes (no view of them kept), `release` leaves it to the next body.
 * Node's HTTP parser delivers no more than the declared length and ends a body early only when the
 * connection breaks, which rejects.
 */
export function readNodeBody(env: unknown, length: number): Promise<LentBody> | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage) || incoming.readableDidRead || incoming.readableEncoding !== null)
    return undefined;
  const memory =
    spare !== undefined && spare.byteLength >= length
      ? spare
      : new ArrayBuffer(Math.ceil(Math.max(length, 1) / BODY_STEP) * BODY_STEP);
  if (memory === spare) spare = undefined;
  const giveBack = () => {
    if (memory.byteLength <= KEPT_BODY_BYTES && (spare === undefined || spare.byteLength < memory.byteLength))
      spare = memory;
  };
  const bytes = new Uint8Array(memory, 0, length);
  return new Promise((resolve, reject) => {
    let received = 0;
    const done = (error?: Error) => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', done);
      incoming.off('close', onClose);
      if (error !== undefined) {
        giveBack();
        reject(error);
        return;
      }
      let released = false;
      resolve({
        bytes,
        release: () => {
          if (!released) giveBack();
          released = true;
        },
      });
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.byteLength > length) {
        done(new Error('The request body is longer than its Content-Length.'));
        incoming.destroy();
        return;
      }
      bytes.set(chunk, received);
      received += chunk.byteLength;
    };
    const onEnd = () =>
      done(received === length ? undefined : new Error('The request body ended before its Content-Length.'));
    const onClose = () => done(new Error('The connection closed before the request body was received.'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', done);
    incoming.on('close', onClose);
  });
}

// A request body of a declared length read on the Node home straight from the socket into one array, readable as it arrives.
import { IncomingMessage } from 'node:http';
import { BytesArriving, type ArrivingBytes } from '../core/arriving-bytes.ts';
import { ToolError } from '../core/errors.ts';

/**
 * The body of the request whose hono bindings are `env`, copied into one array of its declared
 * `length` as the socket delivers it, and readable meanwhile (an archive is unpacked as it
 * arrives); undefined when `env` holds no Node request whose body is still unread (then the route
 * reads `Request` as usual). `Request.arrayBuffer()` on @hono/node-server joins the chunks into one
 * buffer and copies that into another: for a body of megabytes, two arrays first touched (an
 * archive's 7.7 MB: about 50 ms of CPU an upload by profile, against some 30 ms for the one copy
 * here). Node's HTTP parser delivers no more than the declared length and ends a body early only
 * when the connection breaks, which fails every wait for bytes still to come.
 */
export function readNodeBody(env: unknown, length: number): ArrivingBytes | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage) || incoming.readableDidRead || incoming.readableEncoding !== null)
    return undefined;
  const body = new BytesArriving(length);
  // A body cut short is the sender's doing (it closed the connection): the caller's mistake, not
  // the server's, though no answer reaches a sender gone.
  const cut = (why: string) =>
    new ToolError('invalid_argument', `${why}: ${body.available} of its ${length} bytes arrived. Send it again.`);
  const done = (error?: Error) => {
    incoming.off('data', onData);
    incoming.off('end', onEnd);
    incoming.off('error', onError);
    incoming.off('close', onClose);
    if (error !== undefined) body.fail(error);
  };
  const onData = (chunk: Buffer) => {
    if (body.available + chunk.byteLength > length) {
      done(cut('The request body is longer than its Content-Length'));
      incoming.destroy();
      return;
    }
    body.receive(chunk);
  };
  const onEnd = () => done(body.complete ? undefined : cut('The request body ended before its Content-Length'));
  const onError = () => done(cut('The request body was cut short'));
  const onClose = () => done(cut('The connection closed before the request body was received'));
  incoming.on('data', onData);
  incoming.on('end', onEnd);
  incoming.on('error', onError);
  incoming.on('close', onClose);
  return body;
}

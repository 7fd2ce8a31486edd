// Server-Sent Events read from a response body: the event stream format's fields, comments skipped.

/** One event as the stream spelled it: its name (default `message`), its data lines joined, and its id if it had one. */
export interface ServerEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * The events of a `text/event-stream` body, as they arrive. Ends when the body ends; a partial
 * event at the end is dropped, as the format says. Cancelling the iteration (a `break`, a
 * `return`) cancels the body.
 */
export async function* readServerEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<ServerEvent, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let seen = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) !== -1) {
        // A CR ending the chunk may be the first half of a CRLF: wait for what follows.
        if (buffer[newline] === '\r' && newline === buffer.length - 1) break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (seen) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
          id = undefined;
          seen = false;
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\u0000')) id = value;
        else continue;
        seen = true;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

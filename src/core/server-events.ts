// Server-Sent Events read from a response body, as the HTML standard parses the event stream
// format: the one reader of both the TypeScript client and the console.

/** One event: its name (default `message`), its data lines joined, and the last event id the stream gave, if any. */
export interface ServerEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * The events of a `text/event-stream` body, as they arrive. An event is dispatched at a blank
 * line when it has data; comments are skipped; an id stays the stream's last event id until
 * another replaces it (what `Last-Event-ID` resumes from). Ends when the body ends (a partial
 * event at the end is dropped, as the format says); ending the iteration cancels the body.
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
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.search(/\r\n|\r|\n/); end !== -1; end = buffer.search(/\r\n|\r|\n/)) {
        // A CR ending the chunk may be the first half of a CRLF: wait for what follows.
        if (buffer[end] === '\r' && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
          event = '';
          data = [];
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
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

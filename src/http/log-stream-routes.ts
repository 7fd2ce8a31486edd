// The log stream route: a process's output as Server-Sent Events, under the same scope, allowlist and metering as bash `logs`.
import { Hono } from 'hono';
import { ToolError } from '../core/errors.ts';
import type { ProcessStore } from '../processes/process-store.ts';
import type { AppDeps, AppEnv } from './app-deps.ts';
import { eventStreamResponse, KEEP_ALIVE_MS } from './event-stream.ts';
import { logEvents, SharedLogPages } from './log-stream.ts';
import { consoleLog } from '../core/log.ts';

/** Process ids are `proc_` and hex; anything else printable of this shape is looked up and may be absent. */
const PROCESS_ID = /^[A-Za-z0-9_-]{1,200}$/;
/** An offset: digits only, within what a JavaScript number holds exactly. */
const OFFSET = /^[0-9]{1,15}$/;

export interface LogStreamDeps extends Pick<AppDeps, 'calls'> {
  processes: Pick<ProcessStore, 'readLogs' | 'get' | 'onChange'>;
  /** How long a stream stays quiet before a keep-alive comment (default KEEP_ALIVE_MS). */
  keepAliveMs?: number;
}

export function logStreamRoutes(deps: LogStreamDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  const pages = new SharedLogPages(deps.processes);

  routes.get('/workspaces/:ws/processes/:id/logs/stream', async (c) => {
    const workspace = c.req.param('ws');
    const processId = c.req.param('id');
    if (!PROCESS_ID.test(processId)) {
      throw new ToolError(
        'invalid_argument',
        'The process id in the path is not one toolgate gives (letters, digits, _ and -, at most 200); list processes with bash action "list".',
        { processId: processId.slice(0, 200) },
      );
    }
    // Both are checked when both are given; Last-Event-ID wins, since an EventSource resends the URL it first opened.
    const fromQuery = parseOffset(c.req.query('offset'), 'offset');
    const fromHeader = parseOffset(c.req.header('last-event-id'), 'Last-Event-ID');
    const from = fromHeader ?? fromQuery;
    // The server's stop ends the stream, so its usage record is written before the database closes.
    const serverStop = new AbortController();
    const read = await deps.calls.admitRead({
      key: c.get('key'),
      workspace,
      tool: 'bash',
      args: { action: 'logs', processId, ...(from === undefined ? {} : { offset: from }) },
      onStop: () => serverStop.abort(),
    });
    if (!deps.processes.get(workspace, processId)) {
      const error = new ToolError(
        'not_found',
        `process ${processId} was not found in workspace ${workspace}; list its processes to find the id.`,
        { processId },
      );
      read.close(error.code, 0);
      throw error;
    }
    return eventStreamResponse(
      (signal) =>
        logEvents(
          {
            processes: deps.processes,
            pages,
            keyLive: read.keyLive,
            workspace,
            processId,
            from,
            keepAliveMs: deps.keepAliveMs ?? KEEP_ALIVE_MS,
          },
          signal,
        ),
      {
        endSignals: [c.req.raw.signal, serverStop.signal],
        onEnd: (end, bytesOut, code) => read.close(end === 'error' ? (code ?? 'internal') : 'ok', bytesOut),
        log: consoleLog,
      },
    );
  });

  return routes;
}

/** An offset from the query or a header: absent (or an empty header) is undefined; anything but digits is refused. */
function parseOffset(value: string | undefined, name: string): number | undefined {
  if (value === undefined || (value === '' && name === 'Last-Event-ID')) return undefined;
  if (!OFFSET.test(value)) {
    throw new ToolError(
      'invalid_argument',
      `${name} must be a character offset: a whole number of 0 or more, as an event's id gave it.`,
      { [name]: value.slice(0, 100) },
    );
  }
  return Number(value);
}

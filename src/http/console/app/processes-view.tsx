// A workspace's processes: their status, a live tail of the chosen one's log, its stdin and a stop button.
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, workspacePath, type Approval } from './api.ts';
import type { Session } from './session.ts';
import { follow } from './sse.ts';
import { plainText } from './terminal-text.ts';

interface ProcessSnapshot {
  processId: string;
  command: string;
  cwd: string;
  status: string;
  pid: number | null;
  exitCode: number | null;
  startedAt: string | null;
  endedAt: string | null;
}

/** The tail kept on screen, in characters: the server keeps the whole log. */
const TAIL_CHARS = 200_000;
const FINAL = new Set(['exited', 'stopped', 'failed', 'lost']);

export function ProcessesView(props: { session: Session; workspace: string }) {
  const { api } = props.session;
  const [processes, setProcesses] = useState<ProcessSnapshot[] | undefined>();
  const [chosen, setChosen] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [command, setCommand] = useState('');

  const refresh = async () => {
    try {
      const answer = await api.tool<{ processes: ProcessSnapshot[] }>(props.workspace, 'bash', { action: 'list' });
      if (answer.approval) setNotice(pendingNotice('Listing processes', answer.approval));
      else setProcesses(answer.result.processes);
      setFailure(undefined);
    } catch (error) {
      setFailure(describeError(error));
    }
  };
  useEffect(() => void refresh(), [props.workspace]);

  const start = async () => {
    try {
      const answer = await api.tool<ProcessSnapshot>(props.workspace, 'bash', { action: 'start', command });
      if (answer.approval) setNotice(pendingNotice('Starting the command', answer.approval));
      else {
        setCommand('');
        setChosen(answer.result.processId);
      }
      await refresh();
    } catch (error) {
      setFailure(describeError(error));
    }
  };

  return (
    <div class="processes">
      <div class="row">
        <button type="button" onClick={() => void refresh()}>
          Refresh processes
        </button>
      </div>
      {failure ? <p class="error">{failure}</p> : null}
      {notice ? <p role="status">{notice}</p> : null}
      {processes === undefined ? (
        <p class="muted">Loading…</p>
      ) : processes.length === 0 ? (
        <p class="muted">No processes in {props.workspace}.</p>
      ) : (
        <div class="scroll" tabIndex={0} role="region" aria-label="Processes table">
          <table class="process-table">
            <caption>Processes of {props.workspace}</caption>
            <thead>
              <tr>
                <th scope="col">Command</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">Exit</th>
              </tr>
            </thead>
            <tbody>
              {processes.map((process) => (
                <tr key={process.processId} aria-selected={process.processId === chosen}>
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-pressed={process.processId === chosen}
                      onClick={() => setChosen(process.processId)}
                    >
                      <code>{process.command}</code>
                    </button>
                  </td>
                  <td class={`status status-${process.status}`}>{process.status}</td>
                  <td>{process.startedAt ? new Date(process.startedAt).toLocaleTimeString() : '—'}</td>
                  <td>{process.exitCode ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form
        class="start"
        onSubmit={(event) => {
          event.preventDefault();
          if (command.trim() !== '') void start();
        }}
      >
        <label for="start-command">Start a command</label>
        <input
          id="start-command"
          value={command}
          autoComplete="off"
          spellcheck={false}
          onInput={(event) => setCommand(event.currentTarget.value)}
        />
        <button type="submit">Start</button>
      </form>
      {chosen ? (
        <ProcessDetail
          key={chosen}
          session={props.session}
          workspace={props.workspace}
          processId={chosen}
          onSnapshot={(snapshot) =>
            setProcesses((list) => list?.map((each) => (each.processId === snapshot.processId ? snapshot : each)))
          }
        />
      ) : null}
    </div>
  );
}

function pendingNotice(what: string, approval: Approval): string {
  return `${what} waits for approval ${approval.id}; it runs once an approver decides.`;
}

function ProcessDetail(props: {
  session: Session;
  workspace: string;
  processId: string;
  /** Each newer snapshot of the process, so the list above shows the same status. */
  onSnapshot: (snapshot: ProcessSnapshot) => void;
}) {
  const { api } = props.session;
  const [log, setLog] = useState('');
  const [snapshot, setSnapshot] = useState<ProcessSnapshot | undefined>();
  const [input, setInput] = useState('');
  const [eof, setEof] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const logRef = useRef<HTMLPreElement>(null);
  const ended = useRef(false);
  // A process's status never leaves a final one: an answer sent before the exit (stop's, while the
  // runner has yet to report) that arrives after it must not show the process running again.
  const show = (next: ProcessSnapshot) =>
    setSnapshot((current) => (current && FINAL.has(current.status) && !FINAL.has(next.status) ? current : next));

  useEffect(() => {
    const stop = new AbortController();
    const readStatus = () =>
      api.tool<ProcessSnapshot>(props.workspace, 'bash', { action: 'status', processId: props.processId }).then(
        (answer) => answer.result && show(answer.result),
        () => undefined,
      );
    void readStatus();
    // A process listed while queued has started once it prints: its status is read again then.
    let printed = false;
    const path = workspacePath(props.workspace, `/processes/${encodeURIComponent(props.processId)}/logs/stream`);
    void follow(api, path, stop.signal, {
      onEvent: (event) => {
        if (event.event === 'output') {
          const chunk = JSON.parse(event.data) as { data: string };
          setLog((before) => (before + chunk.data).slice(-TAIL_CHARS));
          if (!printed) {
            printed = true;
            void readStatus();
          }
        } else if (event.event === 'exit') {
          ended.current = true;
          show(JSON.parse(event.data) as ProcessSnapshot);
        }
      },
      onError: (error) => setFailure(describeError(error)),
      done: () => ended.current,
    });
    return () => stop.abort();
  }, [props.processId]);

  useEffect(() => {
    if (snapshot) props.onSnapshot(snapshot);
  }, [snapshot]);

  // The tail follows the end while the reader is at the end.
  useEffect(() => {
    const pre = logRef.current;
    if (pre && pre.scrollHeight - pre.scrollTop - pre.clientHeight < 80) pre.scrollTop = pre.scrollHeight;
  }, [log]);

  const act = async (args: Record<string, unknown>, what: string) => {
    setFailure(undefined);
    try {
      const answer = await api.tool<ProcessSnapshot | { bytesWritten: number }>(props.workspace, 'bash', {
        ...args,
        processId: props.processId,
      });
      if (answer.approval) setNotice(pendingNotice(what, answer.approval));
      else if ('status' in answer.result) show(answer.result);
      else setNotice(`Sent ${answer.result.bytesWritten} bytes.`);
    } catch (error) {
      setFailure(describeError(error));
    }
  };

  const running = snapshot !== undefined && !FINAL.has(snapshot.status);
  return (
    <section class="process-detail" aria-labelledby="process-title">
      <h3 id="process-title">
        <code>{snapshot?.command ?? props.processId}</code>
      </h3>
      <p>
        Status: <strong class="process-status">{snapshot?.status ?? '…'}</strong>
        {snapshot?.exitCode !== null && snapshot?.exitCode !== undefined ? `, exit code ${snapshot.exitCode}` : ''}
      </p>
      {failure ? <p class="error">{failure}</p> : null}
      {notice ? <p role="status">{notice}</p> : null}
      <pre class="log" role="log" aria-label="Process output" tabIndex={0} ref={logRef}>
        {plainText(log)}
      </pre>
      {running ? (
        <>
          <form
            class="stdin"
            onSubmit={(event) => {
              event.preventDefault();
              void act({ action: 'write', input: `${input}\n`, eof }, 'Writing to stdin').then(() => setInput(''));
            }}
          >
            <label for="stdin">Standard input (sent as one line)</label>
            <input
              id="stdin"
              value={input}
              autoComplete="off"
              onInput={(event) => setInput(event.currentTarget.value)}
            />
            <label class="check">
              <input type="checkbox" checked={eof} onChange={(event) => setEof(event.currentTarget.checked)} /> then
              close stdin
            </label>
            <button type="submit">Send</button>
          </form>
          <button type="button" class="reject" onClick={() => void act({ action: 'stop' }, 'Stopping the process')}>
            Stop process
          </button>
        </>
      ) : null}
    </section>
  );
}

// A workspace's files as a tree, a file's text, and its checkpoints: the diff from one to now or between two, and restore.
import { useEffect, useState } from 'preact/hooks';
import { describeError, workspacePath } from './api.ts';
import { DiffView } from './diff-view.tsx';
import type { Session } from './session.ts';

interface Entry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  size: number;
  target?: string;
}

interface FileText {
  path: string;
  content: string;
  totalLines: number;
  truncated: boolean;
  version: string;
}

interface Checkpoint {
  id: string;
  message: string;
  createdAt: string;
}

/** Characters of a file shown at once; the API pages the rest by lines. */
const SHOWN_CHARS = 200_000;

export function FilesView(props: { session: Session; workspace: string }) {
  const [file, setFile] = useState<FileText | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [generation, setGeneration] = useState(0);

  const open = async (path: string) => {
    setFailure(undefined);
    try {
      const answer = await props.session.api.tool<FileText>(props.workspace, 'read_file', {
        path,
        maxChars: SHOWN_CHARS,
      });
      if (answer.approval) setFailure(`Reading ${path} waits for approval ${answer.approval.id}.`);
      else setFile(answer.result);
    } catch (error) {
      setFailure(describeError(error));
    }
  };

  return (
    <div class="files">
      <section class="tree-pane" aria-labelledby="tree-title">
        <h3 id="tree-title">Files</h3>
        <Tree key={generation} session={props.session} workspace={props.workspace} prefix="" onOpen={open} />
      </section>
      <section class="file-pane" aria-labelledby="file-title">
        <h3 id="file-title">{file ? <code>{file.path}</code> : 'File'}</h3>
        {failure ? <p class="error">{failure}</p> : null}
        {file ? (
          <>
            <p class="muted">
              {file.totalLines} lines, version {file.version}
              {file.truncated ? `; only the first ${SHOWN_CHARS.toLocaleString()} characters are shown` : ''}
            </p>
            <pre class="file-text" tabIndex={0} aria-label={`Contents of ${file.path}`}>
              {file.content}
            </pre>
          </>
        ) : (
          <p class="muted">Choose a file in the tree.</p>
        )}
      </section>
      <Checkpoints
        session={props.session}
        workspace={props.workspace}
        onRestored={() => {
          setFile(undefined);
          setGeneration((n) => n + 1);
        }}
      />
    </div>
  );
}

function Tree(props: { session: Session; workspace: string; prefix: string; onOpen: (path: string) => void }) {
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [more, setMore] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());

  const load = async (cursor?: string) => {
    try {
      const page = await props.session.api.get<{ entries: Entry[]; nextCursor?: string }>(
        workspacePath(props.workspace, '/files'),
        { prefix: props.prefix || undefined, cursor },
      );
      setEntries((before) => [...(cursor ? (before ?? []) : []), ...page.entries]);
      setMore(page.nextCursor);
    } catch (error) {
      setFailure(describeError(error));
    }
  };
  useEffect(() => void load(), [props.prefix]);

  if (failure) return <p class="error">{failure}</p>;
  if (!entries) return <p class="muted">Loading…</p>;
  if (entries.length === 0 && props.prefix === '') return <p class="muted">The workspace has no files.</p>;
  const toggle = (path: string) =>
    setExpanded((before) => {
      const next = new Set(before);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  return (
    <ul class="tree">
      {entries.map((entry) => {
        const name = entry.path.slice(entry.path.lastIndexOf('/') + 1);
        if (entry.type === 'dir') {
          const open = expanded.has(entry.path);
          return (
            <li key={entry.path}>
              <button type="button" class="link dir" aria-expanded={open} onClick={() => toggle(entry.path)}>
                {name}/
              </button>
              {open ? <Tree {...props} prefix={entry.path} /> : null}
            </li>
          );
        }
        return (
          <li key={entry.path}>
            <button type="button" class="link file" onClick={() => props.onOpen(entry.path)}>
              {name}
            </button>
            {entry.type === 'symlink' ? <span class="muted"> → {entry.target}</span> : null}
          </li>
        );
      })}
      {more ? (
        <li>
          <button type="button" class="quiet" onClick={() => void load(more)}>
            More…
          </button>
        </li>
      ) : null}
    </ul>
  );
}

function Checkpoints(props: { session: Session; workspace: string; onRestored: () => void }) {
  const { api } = props.session;
  const [checkpoints, setCheckpoints] = useState<Checkpoint[] | undefined>();
  const [diff, setDiff] = useState<{ from: Checkpoint; to?: Checkpoint; text: string } | undefined>();
  const [compareFrom, setCompareFrom] = useState('');
  const [compareTo, setCompareTo] = useState('');
  const [message, setMessage] = useState('');
  const [notice, setNotice] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | undefined>();

  const run = async (work: () => Promise<void>) => {
    setFailure(undefined);
    try {
      await work();
    } catch (error) {
      setFailure(describeError(error));
    }
  };
  const load = () =>
    run(async () => {
      setCheckpoints(
        (await api.get<{ checkpoints: Checkpoint[] }>(workspacePath(props.workspace, '/checkpoints'))).checkpoints,
      );
    });
  useEffect(() => void load(), [props.workspace]);

  const oldest = checkpoints?.[checkpoints.length - 1];
  return (
    <section class="checkpoints" aria-labelledby="checkpoints-title">
      <h3 id="checkpoints-title">Checkpoints</h3>
      <form
        class="row"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            await api.send(
              'POST',
              workspacePath(props.workspace, '/checkpoints'),
              message.trim() === '' ? {} : { message },
            );
            setMessage('');
            setNotice('Checkpoint made.');
            await load();
          });
        }}
      >
        <label for="checkpoint-message">Message</label>
        <input
          id="checkpoint-message"
          value={message}
          autoComplete="off"
          onInput={(event) => setMessage(event.currentTarget.value)}
        />
        <button type="submit">Make a checkpoint</button>
      </form>
      {failure ? <p class="error">{failure}</p> : null}
      {notice ? <p role="status">{notice}</p> : null}
      {checkpoints === undefined ? null : checkpoints.length === 0 ? (
        <p class="muted">No checkpoints yet.</p>
      ) : (
        <ol class="checkpoint-list">
          {checkpoints.map((checkpoint) => (
            <li key={checkpoint.id}>
              <span class="checkpoint-message">{checkpoint.message || '(no message)'}</span>{' '}
              <time class="muted" dateTime={checkpoint.createdAt}>
                {new Date(checkpoint.createdAt).toLocaleString()}
              </time>{' '}
              <code class="muted">{checkpoint.id.slice(0, 10)}</code>
              <div class="buttons">
                <button
                  type="button"
                  aria-label={`Diff to now: ${label(checkpoint)}`}
                  onClick={() =>
                    void run(async () => {
                      const answer = await api.get<{ diff: string }>(workspacePath(props.workspace, '/diff'), {
                        from: checkpoint.id,
                      });
                      setDiff({ from: checkpoint, text: answer.diff });
                    })
                  }
                >
                  Diff to now
                </button>
                <button
                  type="button"
                  class="reject"
                  aria-label={`Restore: ${label(checkpoint)}`}
                  onClick={() => {
                    if (!confirm(`Restore ${props.workspace} to “${label(checkpoint)}”? Changes since are replaced.`))
                      return;
                    void run(async () => {
                      await api.send('POST', workspacePath(props.workspace, '/restore'), { checkpoint: checkpoint.id });
                      setNotice(`Restored to “${label(checkpoint)}”.`);
                      setDiff(undefined);
                      props.onRestored();
                    });
                  }}
                >
                  Restore
                </button>
              </div>
            </li>
          ))}
        </ol>
      )}
      {checkpoints && checkpoints.length > 1 ? (
        <form
          class="row compare"
          onSubmit={(event) => {
            event.preventDefault();
            const from = checkpoints.find((each) => each.id === compareFrom) ?? oldest!;
            const to = checkpoints.find((each) => each.id === compareTo);
            void run(async () => {
              const answer = await api.get<{ diff: string }>(workspacePath(props.workspace, '/diff'), {
                from: from.id,
                to: to?.id,
              });
              setDiff({ from, ...(to ? { to } : {}), text: answer.diff });
            });
          }}
        >
          <label for="compare-from">Compare</label>
          <select
            id="compare-from"
            value={compareFrom || oldest!.id}
            onChange={(event) => setCompareFrom(event.currentTarget.value)}
          >
            {[...checkpoints].reverse().map((checkpoint) => (
              <option key={checkpoint.id} value={checkpoint.id}>
                {label(checkpoint)}
              </option>
            ))}
          </select>
          <label for="compare-to">with</label>
          <select id="compare-to" value={compareTo} onChange={(event) => setCompareTo(event.currentTarget.value)}>
            <option value="">now</option>
            {checkpoints.map((checkpoint) => (
              <option key={checkpoint.id} value={checkpoint.id}>
                {label(checkpoint)}
              </option>
            ))}
          </select>
          <button type="submit">Show the diff</button>
        </form>
      ) : null}
      {diff ? (
        <div class="checkpoint-diff">
          <h4>
            From “{label(diff.from)}” to {diff.to ? `“${label(diff.to)}”` : 'now'}
          </h4>
          {diff.text === '' ? (
            <p class="muted">No changes.</p>
          ) : (
            <DiffView
              diff={diff.text}
              label={
                diff.to ? `Changes from ${label(diff.from)} to ${label(diff.to)}` : `Changes since ${label(diff.from)}`
              }
            />
          )}
        </div>
      ) : null}
    </section>
  );
}

function label(checkpoint: Checkpoint): string {
  return checkpoint.message || checkpoint.id.slice(0, 10);
}

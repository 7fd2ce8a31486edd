// A workspace's checkpoints: make one, the diff from one to now or between two, and restore.
import { useEffect, useState } from 'preact/hooks';
import { describeError, workspacePath } from './api.ts';
import { DiffView } from './diff-view.tsx';
import type { Session } from './session.ts';

interface Checkpoint {
  id: string;
  message: string;
  createdAt: string;
}

export function Checkpoints(props: { session: Session; workspace: string; onRestored: () => void }) {
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

// Approvals live: the pending calls of the key's workspaces as they arrive, each with its full arguments, decided here.
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, type Approval, type KeyInfo } from './api.ts';
import { ChangePreview } from './change-preview-view.tsx';
import { previewPatch, previewWrite, type WriteArguments } from './change-preview.ts';
import { mayDecide, type Session } from './session.ts';
import { follow, isFinal } from './sse.ts';

/** Decided approvals kept on screen, newest first. */
const DECIDED_SHOWN = 20;

export function ApprovalsView(props: { session: Session }) {
  const { api } = props.session;
  const [approvals, setApprovals] = useState<ReadonlyMap<string, Approval>>(new Map());
  const [live, setLive] = useState<'connecting' | 'live' | 'reconnecting' | 'refused'>('connecting');
  const [failure, setFailure] = useState<string | undefined>();
  const [keyNames, setKeyNames] = useState(props.session.keyNames);
  const shown = useRef(approvals);
  shown.current = approvals;

  // An approval from before servers recorded key names names its key by id: an admin may list the keys to name it.
  const unknownKey = [...approvals.values()].some((approval) => !approval.keyName && !keyNames.has(approval.keyId));
  useEffect(() => {
    if (!unknownKey || props.session.role !== 'admin') return;
    api.get<{ keys: KeyInfo[] }>('/v1/keys').then(
      ({ keys }) => setKeyNames(new Map(keys.map((key) => [key.id, key.name]))),
      () => undefined,
    );
  }, [unknownKey]);

  useEffect(() => {
    const stop = new AbortController();
    /**
     * Takes in approvals. With `shownBefore`: the pending ones that were shown before the pending list was
     * asked for; one the list lacks was decided (or expired) meanwhile, and goes.
     */
    const merge = (incoming: readonly Approval[], shownBefore?: ReadonlySet<string>) =>
      setApprovals((before) => {
        const next = new Map(before);
        const listed = new Set(incoming.map((approval) => approval.id));
        for (const id of shownBefore ?? []) if (!listed.has(id) && next.get(id)?.status === 'pending') next.delete(id);
        // A decision never goes back to pending, whichever answer arrives last.
        for (const approval of incoming)
          if (!(approval.status === 'pending' && (next.get(approval.id)?.status ?? 'pending') !== 'pending'))
            next.set(approval.id, approval);
        return next;
      });
    void follow(api, '/v1/approvals/stream', stop.signal, {
      // Listed after each (re)connection, so an approval created while the stream was away is not missed.
      onOpen: () => {
        setLive('live');
        const shownPending = [...shown.current.values()].filter((approval) => approval.status === 'pending');
        const shownBefore = new Set(shownPending.map((approval) => approval.id));
        api.get<{ approvals: Approval[] }>('/v1/approvals', { status: 'pending' }).then(
          ({ approvals: pending }) => {
            merge(pending, shownBefore);
            setFailure(undefined);
          },
          (error: unknown) => setFailure(describeError(error)),
        );
      },
      onEvent: (event) => {
        if (event.event === 'approval') merge([JSON.parse(event.data) as Approval]);
      },
      onError: (error) => {
        setLive(isFinal(error) ? 'refused' : 'reconnecting');
        setFailure(describeError(error));
      },
    });
    return () => stop.abort();
  }, [api]);

  const all = [...approvals.values()];
  const pending = all.filter((approval) => approval.status === 'pending').sort(byCreated);
  const decided = all
    .filter((approval) => approval.status !== 'pending')
    .sort((a, b) => byCreated(b, a))
    .slice(0, DECIDED_SHOWN);
  const update = (approval: Approval) => setApprovals((before) => new Map(before).set(approval.id, approval));

  return (
    <div class="approvals">
      {/* A status region: a screen reader hears when an approval arrives or leaves. */}
      <p role="status" class="muted">
        {live === 'live'
          ? `Live: ${pending.length === 0 ? 'nothing waits' : `${pending.length} waiting`}; new approvals appear here as agents ask.`
          : live === 'connecting'
            ? 'Connecting…'
            : live === 'refused'
              ? 'Not live: the server refused this key (below); sign in again.'
              : 'Reconnecting…'}
      </p>
      {failure ? <p class="error">{failure}</p> : null}
      {mayDecide(props.session) ? null : (
        <p class="note">
          This key has the role {props.session.role}: it sees its own approvals but cannot decide them.
        </p>
      )}
      <section aria-labelledby="pending-title">
        <h3 id="pending-title">Pending ({pending.length})</h3>
        {pending.length === 0 ? <p class="muted">Nothing waits for a decision.</p> : null}
        <ul class="cards">
          {pending.map((approval) => (
            <li key={approval.id}>
              <ApprovalCard session={props.session} keyNames={keyNames} approval={approval} onDecided={update} />
            </li>
          ))}
        </ul>
      </section>
      {decided.length > 0 ? (
        <section aria-labelledby="decided-title">
          <h3 id="decided-title">Recently decided</h3>
          <ul class="cards">
            {decided.map((approval) => (
              <li key={approval.id}>
                <ApprovalCard session={props.session} keyNames={keyNames} approval={approval} onDecided={update} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}

function byCreated(a: Approval, b: Approval): number {
  return a.createdAt.localeCompare(b.createdAt);
}

function ApprovalCard(props: {
  session: Session;
  keyNames: ReadonlyMap<string, string>;
  approval: Approval;
  onDecided: (approval: Approval) => void;
}) {
  const { approval, session } = props;
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | undefined>();
  const titleId = `approval-${approval.id}`;
  const args = (approval.arguments ?? {}) as Record<string, unknown>;
  const keyName = approval.keyName ?? props.keyNames.get(approval.keyId);

  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setFailure(undefined);
    try {
      props.onDecided(
        await session.api.send<Approval>('POST', `/v1/approvals/${encodeURIComponent(approval.id)}/decision`, {
          decision,
          ...(reason.trim() === '' ? {} : { reason: reason.trim() }),
        }),
      );
    } catch (error) {
      setFailure(describeError(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class={`card approval status-${approval.status}`} aria-labelledby={titleId} data-approval={approval.id}>
      <h4 id={titleId}>
        <code>{approval.tool}</code>
        {approval.action ? <code>{` ${approval.action}`}</code> : null} in <strong>{approval.workspace}</strong>
      </h4>
      <dl class="facts">
        <dt>Key</dt>
        <dd>{keyName ? `${keyName} (${approval.keyId})` : approval.keyId}</dd>
        <dt>Asked</dt>
        <dd>
          <time dateTime={approval.createdAt}>{new Date(approval.createdAt).toLocaleString()}</time>
        </dd>
        <dt>Status</dt>
        <dd class="status">{approval.status}</dd>
        {approval.reason ? (
          <>
            <dt>Reason</dt>
            <dd>{approval.reason}</dd>
          </>
        ) : null}
        {approval.status === 'approved' ? (
          <>
            <dt>Outcome</dt>
            <dd class="outcome">{approval.error ? `${approval.error.code}: ${approval.error.message}` : 'ran'}</dd>
          </>
        ) : null}
      </dl>
      {approval.tool === 'apply_patch' && typeof args.patch === 'string' ? (
        <ChangePreview
          session={session}
          workspace={approval.workspace}
          change={args.patch}
          preview={(read) => previewPatch(args.patch as string, read)}
          live={approval.status === 'pending'}
          sent={{ label: 'The patch as sent', diff: args.patch }}
        />
      ) : null}
      {approval.tool === 'write_file' && typeof args.path === 'string' && typeof args.content === 'string' ? (
        <ChangePreview
          session={session}
          workspace={approval.workspace}
          change={JSON.stringify(args)}
          preview={(read) => previewWrite(args as unknown as WriteArguments, read)}
          live={approval.status === 'pending'}
        />
      ) : null}
      {approval.tool === 'bash' && typeof args.command === 'string' ? (
        <>
          <h5>Command</h5>
          <pre class="command">{args.command}</pre>
        </>
      ) : null}
      <details open={!['apply_patch', 'write_file', 'bash'].includes(approval.tool)}>
        <summary>Full arguments</summary>
        <pre class="arguments">{JSON.stringify(approval.arguments, null, 2)}</pre>
      </details>
      {approval.status === 'pending' && mayDecide(session) ? (
        <form class="decision" onSubmit={(event) => event.preventDefault()}>
          <label for={`reason-${approval.id}`}>Reason (optional)</label>
          <input
            id={`reason-${approval.id}`}
            value={reason}
            onInput={(event) => setReason(event.currentTarget.value)}
            autoComplete="off"
          />
          <div class="buttons">
            <button type="button" class="approve" disabled={busy} onClick={() => decide('approve')}>
              Approve
            </button>
            <button type="button" class="reject" disabled={busy} onClick={() => decide('reject')}>
              Reject
            </button>
          </div>
        </form>
      ) : null}
      {failure ? (
        <p role="alert" class="error">
          {failure}
        </p>
      ) : null}
    </article>
  );
}

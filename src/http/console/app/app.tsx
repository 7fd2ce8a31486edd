// The console's frame: sign-in, the signed-in key, the workspace in view and the four views.
import { useEffect, useState } from 'preact/hooks';
import { describeError } from './api.ts';
import { ApprovalsView } from './approvals-view.tsx';
import { FilesView } from './files-view.tsx';
import { ProcessesView } from './processes-view.tsx';
import { signIn, signOut, storedKey, type Session } from './session.ts';
import { SignIn } from './sign-in.tsx';
import { UsageView } from './usage-view.tsx';
import { WorkspacePicker } from './workspace-picker.tsx';

const views = [
  { id: 'approvals', label: 'Approvals' },
  { id: 'processes', label: 'Processes' },
  { id: 'files', label: 'Files' },
  { id: 'usage', label: 'Usage' },
] as const;
type ViewId = (typeof views)[number]['id'];

const WORKSPACE_ITEM = 'toolgate.console.workspace';

function viewFromHash(): ViewId | undefined {
  const id = location.hash.slice(1);
  return views.find((view) => view.id === id)?.id;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>();
  const [restoring, setRestoring] = useState(() => storedKey() !== null);
  const [failure, setFailure] = useState<string | undefined>();
  const [view, setView] = useState<ViewId>(() => viewFromHash() ?? 'approvals');
  const [workspace, setWorkspace] = useState(() => sessionStorage.getItem(WORKSPACE_ITEM) ?? '');

  useEffect(() => {
    // A hash that names no view (none, or another link's) leaves the view as it is.
    const onHash = () => {
      const next = viewFromHash();
      if (next) setView(next);
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  // A reload of the tab keeps its key (sessionStorage), so it signs in again by itself.
  useEffect(() => {
    const secret = storedKey();
    if (secret === null) return;
    signIn(secret)
      .then(setSession, (error: unknown) => {
        signOut();
        setFailure(describeError(error));
      })
      .finally(() => setRestoring(false));
  }, []);

  const chooseWorkspace = (name: string) => {
    setWorkspace(name);
    sessionStorage.setItem(WORKSPACE_ITEM, name);
  };

  if (!session) {
    return (
      <main id="main" class="sign-in-page">
        <h1>toolgate console</h1>
        {restoring ? (
          <p role="status">Signing in…</p>
        ) : (
          <SignIn
            failure={failure}
            onSubmit={async (secret) => {
              try {
                setSession(await signIn(secret));
                setFailure(undefined);
              } catch (error) {
                setFailure(describeError(error));
              }
            }}
          />
        )}
      </main>
    );
  }

  const current = views.find((each) => each.id === view)!;
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(event) => {
          // Focus moves without touching the hash, which names the view.
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <h1>toolgate console</h1>
        <p class="who">
          {session.me ? (
            <>
              Signed in as <strong>{session.me.name}</strong> ({session.role})
            </>
          ) : (
            // An admin sees the keys within its scope and cannot tell which of them is its own.
            <>
              Signed in with an <strong>admin</strong> key
            </>
          )}
        </p>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            signOut();
            setSession(undefined);
          }}
        >
          Sign out
        </button>
        <nav aria-label="Views">
          <ul>
            {views.map((each) => (
              <li key={each.id}>
                <a href={`#${each.id}`} aria-current={each.id === view ? 'page' : undefined}>
                  {each.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1} aria-labelledby="view-title">
        <h2 id="view-title">{current.label}</h2>
        {view !== 'approvals' && view !== 'usage' ? (
          <WorkspacePicker session={session} value={workspace} onChange={chooseWorkspace} />
        ) : null}
        {view === 'approvals' ? <ApprovalsView session={session} /> : null}
        {view === 'processes' && workspace !== '' ? (
          <ProcessesView key={workspace} session={session} workspace={workspace} />
        ) : null}
        {view === 'files' && workspace !== '' ? (
          <FilesView key={workspace} session={session} workspace={workspace} />
        ) : null}
        {view === 'usage' ? <UsageView session={session} /> : null}
      </main>
    </>
  );
}

// The sign-in form: a key, checked against the API, kept for this tab only.
import { useState } from 'preact/hooks';

export function SignIn(props: { failure: string | undefined; onSubmit: (secret: string) => Promise<void> }) {
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="sign-in"
      onSubmit={async (event) => {
        event.preventDefault();
        if (secret.trim() === '') return;
        setBusy(true);
        await props.onSubmit(secret.trim());
        setBusy(false);
      }}
    >
      <label for="api-key">API key</label>
      <input
        id="api-key"
        name="api-key"
        type="password"
        autoComplete="off"
        spellcheck={false}
        required
        value={secret}
        onInput={(event) => setSecret(event.currentTarget.value)}
        aria-describedby="key-note"
      />
      <p id="key-note" class="muted">
        The key stays in this tab (sessionStorage) and is sent only to this server's API.
      </p>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {props.failure ? (
        <p role="alert" class="error">
          {props.failure}
        </p>
      ) : null}
    </form>
  );
}

// Chooses the workspace the processes and files views show: typed, or picked from those the key's scope and usage name.
import { useEffect, useState } from 'preact/hooks';
import type { Session } from './session.ts';

export function WorkspacePicker(props: { session: Session; value: string; onChange: (name: string) => void }) {
  const [draft, setDraft] = useState(props.value);
  const [known, setKnown] = useState<string[]>(props.session.scopeWorkspaces);

  useEffect(() => {
    // The API lists no workspaces; those the key has called tools on are a good start.
    props.session.api.get<{ rows: { group: string }[] }>('/v1/usage', { groupBy: 'workspace' }).then(
      ({ rows }) =>
        setKnown((before) => [...new Set([...before, ...rows.map((row) => row.group)])].filter(Boolean).sort()),
      () => undefined,
    );
  }, [props.session]);

  return (
    <form
      class="workspace-picker"
      onSubmit={(event) => {
        event.preventDefault();
        props.onChange(draft.trim());
      }}
    >
      <label for="workspace">Workspace</label>
      <input
        id="workspace"
        name="workspace"
        list="known-workspaces"
        autoComplete="off"
        spellcheck={false}
        pattern="[a-z0-9][a-z0-9_\-]{0,62}"
        required
        value={draft}
        onInput={(event) => setDraft(event.currentTarget.value)}
      />
      <datalist id="known-workspaces">
        {known.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <button type="submit">Open</button>
    </form>
  );
}

// A workspace's files as a tree and a file's text, above its checkpoints (checkpoints-view.tsx).
import { useEffect, useState } from 'preact/hooks';
import { describeError, workspacePath } from './api.ts';
import { Checkpoints } from './checkpoints-view.tsx';
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

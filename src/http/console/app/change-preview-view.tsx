// A file change awaiting a decision (apply_patch, write_file), shown as the diff it would make against each file as it is now.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, describeError } from './api.ts';
import { DiffView } from './diff-view.tsx';
import type { PreviewFile, ReadCurrent } from './change-preview.ts';
import type { Session } from './session.ts';

/** Large enough for any file the server keeps (TOOLGATE_MAX_FILE_BYTES is smaller), so a preview reads it whole. */
const READ_WHOLE = 1 << 30;

export function ChangePreview(props: {
  session: Session;
  workspace: string;
  /** What the change would do, given a way to read the files as they are now. */
  preview: (read: ReadCurrent) => Promise<PreviewFile[]>;
  /** Identifies the change: the preview is made again when it differs. */
  change: string;
  live: boolean;
  /** Shown instead once the approval is decided (the files have moved on), if anything. */
  sent?: { label: string; diff: string };
}) {
  const [files, setFiles] = useState<PreviewFile[] | undefined>();
  const [failure, setFailure] = useState<string | undefined>();

  useEffect(() => {
    // Once decided, the files have moved on: the patch itself is what stays true.
    if (!props.live) return;
    const read = async (path: string): Promise<string | undefined> => {
      // A file the change adds is usually absent: glob says so without a 404 (a path with glob
      // characters in it is read directly).
      if (!/[*?[\]{}!]/.test(path)) {
        const found = await props.session.api.tool<{ paths: string[] }>(props.workspace, 'glob', {
          pattern: path.replace(/^\/+/, ''),
          hidden: true,
          noIgnore: true,
        });
        if (found.result && found.result.paths.length === 0) return undefined;
      }
      try {
        const answer = await props.session.api.tool<{ content: string }>(props.workspace, 'read_file', {
          path,
          maxChars: READ_WHOLE,
        });
        if (answer.approval) throw new Error('reading the current file needs an approval for this key');
        return answer.result.content;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_found') return undefined;
        throw error;
      }
    };
    props.preview(read).then(setFiles, (error: unknown) => setFailure(describeError(error)));
  }, [props.change, props.workspace, props.live]);

  if (!props.live) {
    return props.sent ? (
      <>
        <h5>{props.sent.label}</h5>
        <DiffView diff={props.sent.diff} label={props.sent.label} />
      </>
    ) : null;
  }
  if (failure) return <p class="error">The change cannot be shown against the current files: {failure}</p>;
  if (!files) return <p class="muted">Reading the files the change touches…</p>;
  return (
    <div class="patch-preview">
      {files.map((file) => (
        <section key={file.path} class="patch-file" aria-label={`${file.action} ${file.path}`}>
          <h5>
            {file.action} <code>{file.path}</code>
            {file.movedTo ? (
              <>
                {' → '}
                <code>{file.movedTo}</code>
              </>
            ) : null}
          </h5>
          {file.diff !== undefined ? (
            <DiffView diff={file.diff} label={`Changes to ${file.path} against the current file`} />
          ) : (
            <p class="error">{file.problem}</p>
          )}
        </section>
      ))}
    </div>
  );
}

// A unified diff, coloured by line kind; each line keeps its +, - or space, so colour is never the only sign.
export function DiffView(props: { diff: string; label: string }) {
  const lines = props.diff.endsWith('\n') ? props.diff.slice(0, -1).split('\n') : props.diff.split('\n');
  return (
    <pre class="diff" aria-label={props.label} tabIndex={0}>
      {lines.map((line, index) => (
        <span key={index} class={lineClass(line)}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-same';
}

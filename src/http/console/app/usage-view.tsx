// Usage: calls per tool and day as a stacked bar chart (plain SVG) with its numbers as a table, and per key for admins.
import { useEffect, useState } from 'preact/hooks';
import { describeError, type KeyInfo } from './api.ts';
import type { Session } from './session.ts';

interface UsageRow {
  group: string;
  calls: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
  processSeconds: number;
}

interface Day {
  /** YYYY-MM-DD, in UTC as the server counts. */
  date: string;
  rows: UsageRow[];
}

const DAY_MS = 86_400_000;
/**
 * Twelve colours, each at least 3:1 against white, drawn from Okabe and Ito's and Tol's palettes
 * (told apart with the commoner colour blindnesses); each bar's title and the table name the numbers.
 */
const COLOURS = [
  '#0072B2',
  '#D55E00',
  '#117733',
  '#AA4499',
  '#332288',
  '#7a6a00',
  '#882255',
  '#1f6f8b',
  '#b3261e',
  '#5d4037',
  '#4d4d4d',
  '#6a3d9a',
];

export function UsageView(props: { session: Session }) {
  const { api } = props.session;
  const [days, setDays] = useState(14);
  const [series, setSeries] = useState<Day[] | undefined>();
  const [byKey, setByKey] = useState<UsageRow[] | undefined>();
  const [keyNames, setKeyNames] = useState(props.session.keyNames);
  const [failure, setFailure] = useState<string | undefined>();

  useEffect(() => {
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const starts = Array.from({ length: days }, (_, index) => today - (days - 1 - index) * DAY_MS);
    Promise.all(
      starts.map(async (start) => ({
        date: new Date(start).toISOString().slice(0, 10),
        rows: (
          await api.get<{ rows: UsageRow[] }>('/v1/usage', { groupBy: 'tool', from: start, to: start + DAY_MS - 1 })
        ).rows,
      })),
    ).then(setSeries, (error: unknown) => setFailure(describeError(error)));
    if (props.session.role === 'admin')
      // The keys are listed again, so keys made since signing in are named too.
      Promise.all([
        api.get<{ rows: UsageRow[] }>('/v1/usage', { groupBy: 'key', from: starts[0] }),
        api.get<{ keys: KeyInfo[] }>('/v1/keys'),
      ]).then(
        ([{ rows }, { keys }]) => {
          setByKey(rows);
          setKeyNames(new Map(keys.map((key) => [key.id, key.name])));
        },
        (error: unknown) => setFailure(describeError(error)),
      );
  }, [api, days]);

  return (
    <div class="usage">
      <form class="row" onSubmit={(event) => event.preventDefault()}>
        <label for="usage-days">Days</label>
        <select id="usage-days" value={String(days)} onChange={(event) => setDays(Number(event.currentTarget.value))}>
          {[7, 14, 30].map((count) => (
            <option key={count} value={String(count)}>
              last {count} days
            </option>
          ))}
        </select>
      </form>
      {failure ? <p class="error">{failure}</p> : null}
      {series ? <ToolChart series={series} /> : <p class="muted">Loading…</p>}
      {byKey ? <KeyTable rows={byKey} names={keyNames} days={days} /> : null}
    </div>
  );
}

function ToolChart(props: { series: Day[] }) {
  const tools = [...new Set(props.series.flatMap((day) => day.rows.map((row) => row.group)))].sort();
  const colour = (tool: string) => COLOURS[tools.indexOf(tool) % COLOURS.length]!;
  const total = (day: Day) => day.rows.reduce((sum, row) => sum + row.calls, 0);
  const max = Math.max(1, ...props.series.map(total));
  const width = 640;
  const height = 200;
  const left = 36;
  const bottom = 22;
  const slot = (width - left) / props.series.length;
  const bar = Math.max(2, slot * 0.7);
  const y = (calls: number) => (height - bottom) * (1 - calls / max);
  return (
    <section aria-labelledby="per-tool-title">
      <h3 id="per-tool-title">Calls per tool and day (UTC)</h3>
      {tools.length === 0 ? <p class="muted">No calls in this period.</p> : null}
      <figure class="chart">
        <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="chart-caption">
          <line x1={left} x2={width} y1={height - bottom} y2={height - bottom} class="axis" />
          <text x={left - 4} y={10} class="tick" text-anchor="end">
            {max}
          </text>
          <text x={left - 4} y={height - bottom} class="tick" text-anchor="end">
            0
          </text>
          {props.series.map((day, index) => {
            let base = 0;
            const x = left + index * slot + (slot - bar) / 2;
            return (
              <g key={day.date}>
                {tools.map((tool) => {
                  const calls = day.rows.find((row) => row.group === tool)?.calls ?? 0;
                  if (calls === 0) return null;
                  const top = y(base + calls);
                  const rect = (
                    <rect
                      key={tool}
                      x={x}
                      y={top}
                      width={bar}
                      height={y(base) - top}
                      fill={colour(tool)}
                      class="segment"
                    >
                      <title>{`${day.date} ${tool}: ${calls} calls`}</title>
                    </rect>
                  );
                  base += calls;
                  return rect;
                })}
                {index % Math.ceil(props.series.length / 7) === 0 ? (
                  <text x={x + bar / 2} y={height - 6} class="tick" text-anchor="middle">
                    {day.date.slice(5)}
                  </text>
                ) : null}
              </g>
            );
          })}
        </svg>
        <figcaption id="chart-caption">
          Calls per day, stacked by tool:{' '}
          {tools.map((tool) => (
            <span key={tool} class="legend">
              <svg width="12" height="12" aria-hidden="true">
                <rect width="12" height="12" fill={colour(tool)} />
              </svg>{' '}
              {tool}{' '}
            </span>
          ))}
        </figcaption>
      </figure>
      <details>
        <summary>The numbers</summary>
        <div class="scroll" tabIndex={0} role="region" aria-label="Calls per tool and day, as numbers">
          <table>
            <caption>Calls per tool and day; errors in brackets</caption>
            <thead>
              <tr>
                <th scope="col">Day</th>
                {tools.map((tool) => (
                  <th key={tool} scope="col">
                    {tool}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {props.series.map((day) => (
                <tr key={day.date}>
                  <th scope="row">{day.date}</th>
                  {tools.map((tool) => {
                    const row = day.rows.find((each) => each.group === tool);
                    return <td key={tool}>{row ? `${row.calls}${row.errors ? ` (${row.errors})` : ''}` : 0}</td>;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

function KeyTable(props: { rows: UsageRow[]; names: ReadonlyMap<string, string>; days: number }) {
  return (
    <section aria-labelledby="per-key-title">
      <h3 id="per-key-title">Per key, last {props.days} days</h3>
      {props.rows.length === 0 ? (
        <p class="muted">No calls in this period.</p>
      ) : (
        <div class="scroll" tabIndex={0} role="region" aria-label="Usage per key">
          <table class="key-usage">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Calls</th>
                <th scope="col">Errors</th>
                <th scope="col">Bytes in</th>
                <th scope="col">Bytes out</th>
                <th scope="col">Process seconds</th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((row) => (
                <tr key={row.group}>
                  <th scope="row">{props.names.get(row.group) ?? row.group}</th>
                  <td>{row.calls}</td>
                  <td>{row.errors}</td>
                  <td>{row.bytesIn.toLocaleString()}</td>
                  <td>{row.bytesOut.toLocaleString()}</td>
                  <td>{Math.round(row.processSeconds * 10) / 10}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

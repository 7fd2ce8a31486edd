// Followers of one log stream, run as their own process: opens N streams, says "open" once each has
// its first event, then reads every event until stdin closes, and reports what the streams received.
import { readServerEvents } from '../src/core/server-events.ts';

export interface FollowersSpec {
  url: string;
  key: string;
  path: string;
  streams: number;
}

export interface FollowersReport {
  events: number;
  errors: number;
}

async function follow(spec: FollowersSpec, counts: FollowersReport, opened: () => void, signal: AbortSignal) {
  try {
    const response = await fetch(spec.url + spec.path, { headers: { authorization: `Bearer ${spec.key}` }, signal });
    if (response.status !== 200 || !response.body) throw new Error(`the stream answered ${response.status}`);
    let first = true;
    for await (const event of readServerEvents(response.body)) {
      if (event.event === 'output') counts.events += 1;
      if (first) opened();
      first = false;
    }
  } catch (error) {
    if (!signal.aborted) {
      counts.errors += 1;
      console.error(error);
    }
  }
}

if (process.argv[2] === '--child') {
  const spec = JSON.parse(process.argv[3]!) as FollowersSpec;
  const counts: FollowersReport = { events: 0, errors: 0 };
  const stop = new AbortController();
  let open = 0;
  const opened = () => {
    open += 1;
    if (open === spec.streams) process.stdout.write('open\n');
  };
  const running = Array.from({ length: spec.streams }, () => follow(spec, counts, opened, stop.signal));
  process.stdin.resume();
  process.stdin.on('end', () => {
    stop.abort();
    void Promise.all(running).then(() => {
      process.stdout.write(`${JSON.stringify(counts)}\n`);
      process.exit(0);
    });
  });
}

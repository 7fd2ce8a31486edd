// P9, live control: stdin through the API to a running process and its echo back in the logs, vs a direct pipe; stop latency.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapArgs } from '../src/runner/node/bubblewrap.ts';
import type { ProcessStore } from '../src/processes/process-store.ts';
import type { Workspaces } from '../src/workspace/workspaces.ts';

const TRIES = 25;
const WARMUP = 3;
/**
 * Between tries, as between an agent's calls: the runner ships output at once after a quiet spell
 * of 50 ms and gathers it in between, so back-to-back tries would time the gathering instead.
 */
const PAUSE_MS = 100;
/** Echoes each line with the moment the process read it (epoch µs, bash's own clock, no fork). */
const ECHO = 'while read x; do echo "got $x $EPOCHREALTIME"; done';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Epoch milliseconds with a fraction, the clock $EPOCHREALTIME shares. */
const epochMs = () => performance.timeOrigin + performance.now();

/** When the process read line `tag`, from its echo. */
function readAt(log: string, tag: string): number {
  const match = new RegExp(`got ${tag} (\\d+)\\.(\\d+)\\n`).exec(log);
  if (!match) throw new Error(`no echo of ${tag} in ${JSON.stringify(log.slice(-200))}`);
  return Number(match[1]) * 1000 + Number(match[2]) / 1000;
}

/** The fields of a bash answer this bench reads. */
interface BashResult {
  processId: string;
}

async function call(url: string, key: string, ws: string, args: unknown): Promise<BashResult> {
  const response = await fetch(`${url}/v1/workspaces/${ws}/tools/bash`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const body = (await response.json()) as { result: BashResult };
  if (response.status !== 200) throw new Error(`bash answered ${response.status}: ${JSON.stringify(body)}`);
  return body.result;
}

/** Resolves once the process's log, read from `offset`, holds `text`, woken by the store's own notices (no polling). */
function logHolds(processes: ProcessStore, ws: string, id: string, offset: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      const data = processes.readLogs(ws, id, offset, 1_000_000).data;
      if (!data.includes(text)) return false;
      off();
      resolve(data);
      return true;
    };
    const off = processes.onChange((changed) => {
      if (changed === id) check();
    });
    check();
  });
}

/** Round trips through a pipe to the same loop inside bubblewrap on this host: the floor. */
async function directRoundTrips(bwrap: string): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-bench-pipe-'));
  const child = spawn(
    bwrap,
    bubblewrapArgs({
      workspaceDir: dir,
      cwd: '/workspace',
      env: { PATH: '/usr/bin:/bin' },
      network: false,
      command: ECHO,
    }),
    { env: {} },
  );
  child.stdout.setEncoding('utf8');
  let out = '';
  let waiter: (() => void) | undefined;
  child.stdout.on('data', (text: string) => {
    out += text;
    waiter?.();
  });
  const times: number[] = [];
  for (let i = 0; i < TRIES + WARMUP; i += 1) {
    const tag = `d${i}`;
    const echoed = new Promise<void>((resolve) => (waiter = () => out.includes(`got ${tag} `) && resolve()));
    const started = performance.now();
    child.stdin.write(`${tag}\n`);
    await echoed;
    if (i >= WARMUP) times.push(performance.now() - started);
  }
  child.stdin.end();
  await new Promise((resolve) => child.once('close', resolve));
  await rm(dir, { recursive: true, force: true });
  return times;
}

export async function benchLiveControl(
  url: string,
  key: string,
  workspaces: Workspaces,
  processes: ProcessStore,
  bwrap: string,
): Promise<void> {
  console.log(
    `\n# P9 live control: bash write -> the echo in logs (${TRIES} tries ${PAUSE_MS} ms apart, in-process runner) vs a direct pipe to the same loop in bwrap; stop latency`,
  );
  const ws = 'bench-live';
  if (!workspaces.info(ws)) workspaces.create(ws);
  const floor = await directRoundTrips(bwrap);

  const started = await call(url, key, ws, { action: 'start', command: `echo ready; ${ECHO}` });
  const id = started.processId;
  await logHolds(processes, ws, id, 0, 'ready\n');
  const roundTrips: number[] = [];
  const deliveries: number[] = [];
  let offset = 0;
  for (let i = 0; i < TRIES + WARMUP; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    const tag = `a${i}`;
    const sentAt = epochMs();
    const begun = performance.now();
    await call(url, key, ws, { action: 'write', processId: id, input: `${tag}\n` });
    const data = await logHolds(processes, ws, id, offset, `got ${tag} `);
    const elapsed = performance.now() - begun;
    offset += data.length;
    if (i < WARMUP) continue;
    roundTrips.push(elapsed);
    deliveries.push(readAt(data, tag) - sentAt);
  }
  await call(url, key, ws, { action: 'write', processId: id, input: '', eof: true });
  await processes.waitForEnd(ws, id, 60_000);

  const stops: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const victim = await call(url, key, ws, { action: 'start', command: "trap '' TERM; echo ready; sleep 300" });
    await logHolds(processes, ws, victim.processId, 0, 'ready\n');
    const begun = performance.now();
    await call(url, key, ws, { action: 'stop', processId: victim.processId, graceMs: 0 });
    const record = await processes.waitForEnd(ws, victim.processId, 60_000);
    if (record.status !== 'stopped') throw new Error(`a stopped process ended ${record.status}`);
    stops.push(performance.now() - begun);
  }

  const budget = 2 * median(floor) + 10;
  const p50 = median(roundTrips);
  console.log(`direct pipe round trip      : p50 ${median(floor).toFixed(2)} ms`);
  console.log(`write -> echo in logs (API) : p50 ${p50.toFixed(2)} ms, max ${Math.max(...roundTrips).toFixed(1)} ms`);
  console.log(
    `write -> process reads it   : p50 ${median(deliveries).toFixed(2)} ms (docs/api.md: within 100 ms: ${median(deliveries) <= 100 ? 'met' : 'NOT met'})`,
  );
  console.log(
    `round trip / direct: ${(p50 / median(floor)).toFixed(2)}x; target <= 2x + 10 ms = ${budget.toFixed(1)} ms: ${p50 <= budget ? 'met' : 'NOT met'}`,
  );
  console.log(
    `stop (graceMs 0, TERM ignored) -> stopped: p50 ${median(stops).toFixed(2)} ms (docs/api.md: within 100 ms: ${median(stops) <= 100 ? 'met' : 'NOT met'})`,
  );
}

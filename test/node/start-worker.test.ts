// `npm run start:worker`'s start of wrangler dev, against a stand-in for wrangler's CLI: with PORT=0
// a start that finds its port taken (another process bound it after it was probed free) is tried
// again on other ports, and any other failure, or a taken PORT that was set, stops the start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServing, type Wrangler } from '../../functions/start-worker.ts';

let dir: string;
let cli: string;

/**
 * Stands in for `wrangler dev`: it appends the port it was given to `starts`, then, as
 * FAKE_WRANGLER says, exits as wrangler does when its port is taken (`taken`, or `taken-once` on
 * its first start only), fails otherwise (`fails`), or serves /healthz on that port.
 */
const FAKE_WRANGLER = `
import { appendFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
const args = process.argv.slice(2);
const host = args[args.indexOf('--ip') + 1];
const port = Number(args[args.indexOf('--port') + 1]);
const starts = process.env.FAKE_WRANGLER_STARTS;
appendFileSync(starts, port + '\\n');
const mode = process.env.FAKE_WRANGLER;
const count = readFileSync(starts, 'utf8').trim().split('\\n').length;
if (mode === 'taken' || (mode === 'taken-once' && count === 1)) {
  process.stderr.write('✘ [ERROR] Address already in use (' + host + ':' + port + '). Please check that you are not already running a server on this address or specify a different port with --port.\\n');
  process.exit(1);
}
if (mode === 'fails') {
  process.stderr.write('✘ [ERROR] Could not read wrangler.toml\\n');
  process.exit(2);
}
createServer((request, response) => response.end('{"ok":true}')).listen(port, host);
process.on('SIGTERM', () => process.exit(0));
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-start-worker-'));
  cli = join(dir, 'fake-wrangler.mjs');
  writeFileSync(cli, FAKE_WRANGLER);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs startServing against the stand-in in `mode`; answers what it answered and the ports each start was given. */
async function serve(mode: string, port = 0) {
  const starts = join(dir, `${mode}-${port}.starts`);
  writeFileSync(starts, '');
  process.env.FAKE_WRANGLER = mode;
  process.env.FAKE_WRANGLER_STARTS = starts;
  const started: Wrangler[] = [];
  try {
    const answer = await startServing({
      host: '127.0.0.1',
      port,
      options: [],
      cli,
      closing: () => false,
      started: (wrangler) => started.push(wrangler),
    });
    const ports = readFileSync(starts, 'utf8').trim().split('\n').map(Number);
    return { answer, ports, started };
  } finally {
    delete process.env.FAKE_WRANGLER;
    delete process.env.FAKE_WRANGLER_STARTS;
  }
}

describe('startServing', () => {
  it('tries another port when the one chosen was taken before wrangler bound it, and serves there', async () => {
    const { answer, ports, started } = await serve('taken-once');
    expect(ports).toHaveLength(2);
    expect(ports[1]).not.toBe(ports[0]);
    expect(answer).toMatchObject({ url: `http://127.0.0.1:${ports[1]}` });
    expect(started).toHaveLength(2);
    const serving = started[1]!.child;
    expect(await (await fetch(`http://127.0.0.1:${ports[1]}/healthz`)).json()).toEqual({ ok: true });
    serving.kill('SIGTERM');
    await new Promise((resolve) => serving.once('exit', resolve));
  });

  it('gives up after five starts whose ports were all taken, with wrangler’s exit code', async () => {
    const { answer, ports } = await serve('taken');
    expect(answer).toEqual({ code: 1 });
    expect(ports).toHaveLength(5);
    expect(new Set(ports).size).toBe(5);
  });

  it('stops at once on any other failure of wrangler', async () => {
    const { answer, ports } = await serve('fails');
    expect(answer).toEqual({ code: 2 });
    expect(ports).toHaveLength(1);
  });

  it('never moves off a PORT that was set: a taken one stops the start', async () => {
    const { answer, ports } = await serve('taken-once', 45_871);
    expect(answer).toEqual({ code: 1 });
    expect(ports).toEqual([45_871]);
  });
});

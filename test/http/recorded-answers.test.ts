// Recorded answers: about 200 HTTP calls over the whole public surface, replayed in order against a
// fresh server on a fresh data dir; every answer (status, content type, the contract's headers and
// the raw body text) must be byte-identical to the one recorded, after the one normaliser below.
// It is the safety net of refactors that must not change behaviour.
//
// Replay:  npx vitest run test/http/recorded-answers.test.ts
// Record:  TOOLGATE_RECORD_ANSWERS=1 npx vitest run test/http/recorded-answers.test.ts
//   sends the calls of test/support/record-answers.ts twice, each time to a fresh server, and
//   rewrites test/fixtures/recorded-answers/calls.json only when both recordings agree (a value
//   that differs between them is volatile and needs the normaliser, not a re-recording). Record
//   from a clean checkout of the commit whose behaviour is the reference (e.g. a git worktree):
//   the fixture names that commit. The replay sends the requests the fixture holds, not the list.
//
// A failing call is named `<group>: <call>`; the expected and actual texts show what changed.
// Calls after a changed one may fail too when they depend on it (later calls use ids from earlier
// answers), so look at the first failure first.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordedCalls, serverEnv, type CallSpec, type RecordedRequest } from '../support/record-answers.ts';
import { removeDir, repoRoot, startServer, TEST_KEY, testHome, useServer } from '../support/server-process.ts';

const FIXTURE = join(repoRoot, 'test/fixtures/recorded-answers/calls.json');
const RECORD = process.env.TOOLGATE_RECORD_ANSWERS === '1';

/** Response headers that are part of the contract besides content-type (Date, Content-Length, keep-alive are not). */
const RECORDED_HEADERS = [
  'content-type',
  'retry-after',
  'x-toolgate-replayed',
  'access-control-allow-origin',
  'allow',
  'content-security-policy',
  'referrer-policy',
  'x-content-type-options',
  'www-authenticate',
  'location',
  'mcp-session-id',
];

interface RecordedAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as UTF-8 text, normalised. */
  body: string;
}

interface RecordedCall {
  name: string;
  request: RecordedRequest;
  answer: RecordedAnswer;
}

interface Fixture {
  recordedFrom: string;
  serverEnv: Record<string, string>;
  calls: RecordedCall[];
}

/**
 * THE normaliser: the only values of an answer that are not compared as they are. The recorded
 * answers were stored through it, and each replayed answer goes through it before the comparison.
 * Everything else compares byte for byte. The list, and why each is volatile:
 *
 *  1. ISO 8601 times of years 2020 and later -> `<time>`: createdAt, expiresAt, decidedAt,
 *     a quota's resetsAt (also in its message) are the clock's. Times a call names itself
 *     (usage windows in 1970 or 2001) stay literal.
 *  2. Key secrets `tg_` + 43 base64url -> `<secret#n>`, notify secrets `tgn_...` -> `<notify-secret#n>`:
 *     random.
 *  3. Random ids -> numbered placeholders, numbered in order of first appearance, so that which
 *     answer names which id still compares: `key_` + 20 hex -> `<key#n>`, `apr_` + 32 hex ->
 *     `<apr#n>`, `proc_` + 32 hex -> `<proc#n>`, 40 hex (checkpoint commit ids: a git commit
 *     hashes its time) -> `<commit#n>`.
 *  4. The workspace incarnation in a version: `7.3776a08d` -> `7.<ws#n>` (the 8 hex are a random
 *     uid's; the number before the dot is compared), in version fields and wherever else it recurs
 *     (messages, JSON carried as text).
 *  5. `"durationMs": 29` -> `"durationMs":"<ms>"`: the one bash exec's run time.
 *
 * What is made deterministic instead of masked: one fresh server and data dir, a fixed admin key,
 * calls strictly in sequence, each sent in a later millisecond than the previous answer arrived
 * (lists ordered by creation time never see a tie broken by a random id), and the exec under a key
 * whose calls no usage total read in the recording counts.
 *
 * A request's `{{name}}` is the real value behind the placeholder `<name>`, e.g. `{{apr#1}}`.
 */
class AnswerNormaliser {
  private readonly placeholders = new Map<string, string>();
  private readonly values = new Map<string, string>();
  private readonly counts = new Map<string, number>();
  private readonly incarnations = new Set<string>();

  normalise(text: string): string {
    // Workspace incarnations are learnt from version fields ("version", "expectedVersion",
    // "currentVersion", also inside JSON carried as a string), then replaced wherever they occur.
    for (const match of text.matchAll(/[vV]ersion\\*"\s*:\s*\\*"\d+\.([0-9a-f]{8})\\*"/g))
      this.incarnations.add(match[1]!);
    return text
      .replace(/\b20[2-9]\d-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>')
      .replace(/\btg_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g, (value) => this.placeholder('secret', value))
      .replace(/\btgn_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g, (value) => this.placeholder('notify-secret', value))
      .replace(/\bkey_[0-9a-f]{20}\b/g, (value) => this.placeholder('key', value))
      .replace(/\bapr_[0-9a-f]{32}\b/g, (value) => this.placeholder('apr', value))
      .replace(/\bproc_[0-9a-f]{32}\b/g, (value) => this.placeholder('proc', value))
      .replace(/\b[0-9a-f]{40}\b/g, (value) => this.placeholder('commit', value))
      .replace(/(?<![\w.])(\d+)\.([0-9a-f]{8})(?![\w.])/g, (whole: string, version: string, uid: string) => {
        // Only the uids seen in a version field count, so a decimal number of 8 digits is never taken for one.
        return this.incarnations.has(uid) ? `${version}.${this.placeholder('ws', uid)}` : whole;
      })
      .replace(/"durationMs":\d+/g, '"durationMs":"<ms>"');
  }

  /** A request template with each `{{name}}` replaced by the value that became `<name>`. */
  fill(template: string): string {
    return template.replace(/\{\{([a-z-]+#\d+)\}\}/g, (_, name: string) => {
      const value = this.values.get(`<${name}>`);
      if (value === undefined) throw new Error(`{{${name}}}: no earlier answer held a value normalised to <${name}>`);
      return value;
    });
  }

  private placeholder(kind: string, value: string): string {
    const known = this.placeholders.get(value);
    if (known !== undefined) return known;
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    const name = `<${kind}#${n}>`;
    this.placeholders.set(value, name);
    this.values.set(name, value);
    return name;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Sends one recorded request and answers with its normalised answer. */
async function send(url: string, request: RecordedRequest, normaliser: AnswerNormaliser): Promise<RecordedAnswer> {
  const headers: Record<string, string> = {};
  if (request.auth === undefined) headers.authorization = `Bearer ${TEST_KEY}`;
  else if (request.auth !== null) headers.authorization = normaliser.fill(request.auth);
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name] = normaliser.fill(value);
  let body: string | Uint8Array | undefined;
  if (request.json !== undefined) {
    body = normaliser.fill(JSON.stringify(request.json));
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
  } else if (request.body !== undefined) body = normaliser.fill(request.body);
  else if (request.bodyBase64 !== undefined) body = Buffer.from(request.bodyBase64, 'base64');
  else if (request.bodyRepeat !== undefined)
    body =
      request.bodyRepeat.prefix + request.bodyRepeat.unit.repeat(request.bodyRepeat.count) + request.bodyRepeat.suffix;
  const response = await fetch(url + normaliser.fill(request.path), { method: request.method, headers, body });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const recorded: Record<string, string> = {};
  for (const name of RECORDED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) recorded[name] = normaliser.normalise(value);
  }
  return { status: response.status, headers: recorded, body: normaliser.normalise(utf8.decode(bytes)) };
}

/** The answer as one text, as the comparison sees it: status line, recorded headers, blank line, body. */
function render(answer: RecordedAnswer): string {
  const headers = Object.entries(answer.headers)
    .map(([name, value]) => `${name}: ${value}\n`)
    .join('');
  return `HTTP ${answer.status}\n${headers}\n${answer.body}`;
}

/**
 * Calls run strictly one after the other, and each starts in a later millisecond than the previous
 * answer arrived: rows created by different calls never share a creation time.
 */
class Sequencer {
  private last = 0;

  async next(): Promise<void> {
    while (Date.now() <= this.last) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  done(): void {
    this.last = Date.now();
  }
}

async function recordOnce(calls: readonly CallSpec[]): Promise<RecordedCall[]> {
  const server = await startServer({ env: serverEnv });
  try {
    const normaliser = new AnswerNormaliser();
    const sequencer = new Sequencer();
    const recorded: RecordedCall[] = [];
    for (const call of calls) {
      await sequencer.next();
      const answer = await send(server.url, call.request, normaliser).catch((error: unknown) => {
        throw new Error(`${call.name}: ${(error as Error).message}`);
      });
      sequencer.done();
      recorded.push({ name: call.name, request: call.request, answer });
    }
    return recorded;
  } finally {
    await server.stop();
    removeDir(server.dataDir);
  }
}

function writeFixture(fixture: Fixture): void {
  mkdirSync(dirname(FIXTURE), { recursive: true });
  const head = JSON.stringify({ recordedFrom: fixture.recordedFrom, serverEnv: fixture.serverEnv });
  const lines = fixture.calls.map((call) => JSON.stringify(call));
  writeFileSync(FIXTURE, `${head.slice(0, -1)},\n"calls": [\n${lines.join(',\n')}\n]}\n`);
}

// The Cloudflare home answers differently on purpose (approval ids, no read-only roots): the
// recording is of the Node home.
describe.skipIf(testHome === 'worker' || !RECORD)('recording the answers (TOOLGATE_RECORD_ANSWERS=1)', () => {
  it('records every call twice, and keeps the recording only when both agree', { timeout: 600_000 }, async () => {
    const first = await recordOnce(recordedCalls);
    const second = await recordOnce(recordedCalls);
    const differing = first
      .map((call, index) => ({ name: call.name, first: render(call.answer), second: render(second[index]!.answer) }))
      .filter((pair) => pair.first !== pair.second);
    // Shown as a diff: values that differ between two recordings are volatile, and the normaliser misses them.
    expect(
      Object.fromEntries(differing.map((pair) => [pair.name, pair.second])),
      'answers that differ between two recordings',
    ).toEqual(Object.fromEntries(differing.map((pair) => [pair.name, pair.first])));
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'functions'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    writeFixture({
      recordedFrom: dirty === '' ? commit : `${commit} (with uncommitted changes in src or functions)`,
      serverEnv,
      calls: first,
    });
  });
});

describe.skipIf(testHome === 'worker' || RECORD)('recorded answers stay byte-identical', () => {
  const fixture: Fixture = existsSync(FIXTURE)
    ? (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Fixture)
    : { recordedFrom: 'none', serverEnv: {}, calls: [] };
  const server = useServer({ env: fixture.serverEnv });
  const normaliser = new AnswerNormaliser();
  const sequencer = new Sequencer();

  it('has a recording', () => {
    expect(fixture.calls.length, `no recording in ${FIXTURE}; see the top of this file`).toBeGreaterThan(0);
  });

  for (const call of fixture.calls) {
    it(call.name, async () => {
      await sequencer.next();
      const answer = await send(server.url, call.request, normaliser);
      sequencer.done();
      expect(
        render(answer),
        `${call.name}: ${call.request.method} ${call.request.path} (recorded from ${fixture.recordedFrom})`,
      ).toBe(render(call.answer));
    });
  }
});

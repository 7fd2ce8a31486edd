// The proof behind `engine: "auto"`: every script of the corpus (test/fixtures/edge-bash/) runs with
// engine "edge" and with engine "runner" (real bash in bubblewrap) over two forks of one workspace,
// and stdout, stderr, exit code and the resulting files (listing and content hashes) are compared.
// What auto sends to the edge must be identical, but for what the script cannot show (a failure on
// the files, a path outside the workspace, a bug of the edge): the corpus lists every difference with why.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parse } from 'just-bash';
import { unpackTar } from 'modern-tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { autoObjection } from '../../../src/tools/edge-bash/edge-script.ts';
import { DIFFERENTIAL_SCRIPTS, type DifferentialScript } from '../../fixtures/edge-bash/differential-scripts.ts';
import { DIFFERENTIAL_FILES, DIFFERENTIAL_LINKS } from '../../fixtures/edge-bash/differential-tree.ts';
import { useServer } from '../../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_RATE_LIMIT_PER_MINUTE: '0' } });

/** Scripts run at once: each runs on both engines, the runner's half in one of its eight slots. */
const CONCURRENT_SCRIPTS = 8;
/** Set to a file path to write every script's two outcomes there, to study the differences. */
const REPORT_PATH = process.env.TOOLGATE_DIFFERENTIAL_REPORT;

/** What a script did on one engine: what the test compares. */
interface Outcome {
  engine: string;
  stdout: string;
  stderr: string;
  exitCode: number;
  /** The workspace afterwards: `type path hash-or-target`, one per entry, in path order. */
  files: string[];
}

/** The base workspace's files, what a script that changed nothing leaves. */
let baseFiles: string[] = [];

interface Compared {
  entry: DifferentialScript;
  edge: Outcome;
  runner: Outcome;
  same: boolean;
  /** Why auto sends it to a runner; undefined when auto runs it on the edge. */
  autoRunner: string | undefined;
}

const results: Compared[] = [];

async function checked(answer: Promise<{ status: number; body: any }>, what: string) {
  const { status, body } = await answer;
  if (status >= 300) throw new Error(`${what}: ${status} ${JSON.stringify(body)}`);
  return body;
}

async function filesOf(ws: string): Promise<string[]> {
  const response = await fetch(`${server.url}/v1/workspaces/${ws}/archive?format=tar`, {
    headers: { authorization: `Bearer ${server.key}` },
  });
  if (response.status !== 200) throw new Error(`archive of ${ws}: ${response.status} ${await response.text()}`);
  const entries = await unpackTar(new Uint8Array(await response.arrayBuffer()));
  return entries
    .map(({ header, data }) => {
      const name = header.name.replace(/\/$/, '');
      if (header.type === 'symlink') return `symlink ${name} -> ${header.linkname}`;
      if (header.type === 'directory') return `dir ${name}`;
      return `${header.type} ${name} ${createHash('sha256')
        .update(data ?? new Uint8Array())
        .digest('hex')}`;
    })
    .sort();
}

/**
 * A worker's workspace for one engine: a fork of the base, kept for the next script while no
 * script changed it (its version is the one it was forked at), so read-only scripts need no fork
 * and the runner keeps its copy on disk.
 */
interface Fork {
  name: string;
  version: number;
}

let forksMade = 0;

async function forkOf(current: Fork | undefined): Promise<Fork> {
  if (current) return current;
  const name = `d${forksMade++}`;
  const info = await checked(server.call('POST', '/v1/workspaces/base/fork', { to: name }), 'fork');
  return { name, version: info.version };
}

/** Runs `command` in `fork`; the fork comes back undefined when the command changed it. */
async function runOn(
  fork: Fork,
  command: string,
  engine: 'edge' | 'runner',
): Promise<{ outcome: Outcome; unchanged?: Fork }> {
  const answer = await server.call('POST', `/v1/workspaces/${fork.name}/tools/bash`, {
    action: 'exec',
    command,
    engine,
    timeoutMs: 20_000,
  });
  if (answer.status !== 200)
    return {
      outcome: { engine, stdout: '', stderr: JSON.stringify(answer.body), exitCode: -answer.status, files: [] },
      unchanged: fork,
    };
  const { stdout, stderr, exitCode, engine: ran } = answer.body.result;
  const info = await checked(server.call('GET', `/v1/workspaces/${fork.name}`), 'info');
  if (info.version === fork.version)
    return { outcome: { engine: ran, stdout, stderr, exitCode, files: baseFiles }, unchanged: fork };
  return { outcome: { engine: ran, stdout, stderr, exitCode, files: await filesOf(fork.name) } };
}

async function compare(entry: DifferentialScript, forks: { edge?: Fork; runner?: Fork }): Promise<Compared> {
  const [edgeFork, runnerFork] = await Promise.all([forkOf(forks.edge), forkOf(forks.runner)]);
  const [onEdge, onRunner] = await Promise.all([
    runOn(edgeFork, entry.script, 'edge'),
    runOn(runnerFork, entry.script, 'runner'),
  ]);
  forks.edge = onEdge.unchanged;
  forks.runner = onRunner.unchanged;
  const [edge, runner] = [onEdge.outcome, onRunner.outcome];
  const same =
    edge.stdout === runner.stdout &&
    edge.stderr === runner.stderr &&
    edge.exitCode === runner.exitCode &&
    edge.files.join('\n') === runner.files.join('\n');
  let autoRunner: string | undefined;
  try {
    // As the bash tool asks it: the workspace holds links (DIFFERENTIAL_LINKS).
    const objection = autoObjection(parse(entry.script), { links: Object.keys(DIFFERENTIAL_LINKS).length > 0 });
    autoRunner = objection && `${objection.subject}: ${objection.reason}`;
  } catch (error) {
    autoRunner = `does not parse: ${String(error)}`;
  }
  return { entry, edge, runner, same, autoRunner };
}

beforeAll(async () => {
  await checked(server.call('PUT', '/v1/workspaces/base'), 'workspace');
  for (const [path, content] of Object.entries(DIFFERENTIAL_FILES))
    await checked(server.call('POST', '/v1/workspaces/base/tools/write_file', { path, content }), path);
  const links = Object.entries(DIFFERENTIAL_LINKS)
    .map(([path, target]) => `ln -s '${target}' '${path}'`)
    .join(' && ');
  const made = await checked(
    server.call('POST', '/v1/workspaces/base/tools/bash', { action: 'exec', command: links, engine: 'runner' }),
    'links',
  );
  if (made.result.exitCode !== 0) throw new Error(`links: ${JSON.stringify(made.result)}`);
  baseFiles = await filesOf('base');
  let next = 0;
  const worker = async () => {
    const forks = {};
    while (next < DIFFERENTIAL_SCRIPTS.length) {
      const index = next++;
      results[index] = await compare(DIFFERENTIAL_SCRIPTS[index]!, forks);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_SCRIPTS }, worker));
  if (REPORT_PATH) writeFileSync(REPORT_PATH, JSON.stringify(results, null, 1));
}, 600_000);

/** Each script that breaks a rule, with what differs between its two outcomes, so a failure says what to look at. */
const shown = (list: Compared[]) =>
  list.map(({ entry, edge, runner }) => {
    const differences = (['stdout', 'stderr', 'exitCode'] as const)
      .filter((field) => edge[field] !== runner[field])
      .map((field) => `${field}: edge ${JSON.stringify(edge[field])}, runner ${JSON.stringify(runner[field])}`);
    const edgeFiles = new Set(edge.files);
    const runnerFiles = new Set(runner.files);
    const onlyEdge = edge.files.filter((file) => !runnerFiles.has(file));
    const onlyRunner = runner.files.filter((file) => !edgeFiles.has(file));
    if (onlyEdge.length + onlyRunner.length > 0)
      differences.push(`files: edge only ${JSON.stringify(onlyEdge)}, runner only ${JSON.stringify(onlyRunner)}`);
    return `${entry.script}  (${entry.divergence ?? entry.unscreened ?? 'no difference listed'})\n  ${differences.join('\n  ') || 'no difference'}`;
  });

/** How many scripts each reason covers, for the summary line. */
function byReason(list: Compared[], field: 'divergence' | 'unscreened'): string {
  const counts = new Map<string, number>();
  for (const { entry } of list) {
    const reason = entry[field];
    if (reason) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([reason, count]) => `  ${count}× ${reason}`).join('\n');
}

describe('the differential corpus: engine edge against engine runner', () => {
  it('holds at least 400 scripts, and auto runs most of them on the edge', () => {
    expect(DIFFERENTIAL_SCRIPTS.length).toBeGreaterThanOrEqual(400);
    const onEdge = results.filter((result) => result.autoRunner === undefined);
    console.log(
      `differential: ${results.length} scripts; auto runs ${onEdge.length} on the edge ` +
        `(${onEdge.filter((result) => result.entry.unscreened).length} of them differ unscreened); ` +
        `${results.filter((result) => result.entry.divergence).length} listed as divergences\n` +
        `divergences (auto sends these to a runner):\n${byReason(results, 'divergence')}\n` +
        `unscreened (auto runs these on the edge):\n${byReason(results, 'unscreened')}`,
    );
    expect(onEdge.length).toBeGreaterThan(results.length / 2);
  });

  it('gives identical stdout, stderr, exit code and files for every script not listed as differing', () => {
    expect(
      shown(results.filter((result) => !result.entry.divergence && !result.entry.unscreened && !result.same)),
    ).toEqual([]);
  });

  it('lists no divergence among the scripts auto runs on the edge', () => {
    const listed = results.filter((result) => result.entry.divergence && result.autoRunner === undefined);
    expect(listed.map(({ entry }) => `${entry.script}  (${entry.divergence})`)).toEqual([]);
  });

  it('finds every listed difference really different, so the list stays honest', () => {
    expect(
      shown(results.filter((result) => (result.entry.divergence || result.entry.unscreened) && result.same)),
    ).toEqual([]);
  });

  it('ran each engine as asked', () => {
    const wrong = results.filter((result) => result.edge.engine !== 'edge' || result.runner.engine !== 'runner');
    expect(shown(wrong)).toEqual([]);
  });
});

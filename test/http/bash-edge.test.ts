// bash exec's engines over real HTTP, on both homes, with no runner attached: `auto` answers the
// everyday commands in the handler, `edge` refuses what it cannot run naming it, and what the edge
// changes lands as a runner's changes do, with the call's usage record.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../support/keys.ts';
import { testHome, useServer } from '../support/server-process.ts';

// No runner: whatever answers, answered in the handler.
const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });

const bash = (args: Record<string, unknown>, ws = 'edge') =>
  server.call('POST', `/v1/workspaces/${ws}/tools/bash`, args);
const write = (path: string, content: string, ws = 'edge') =>
  server.call('POST', `/v1/workspaces/${ws}/tools/write_file`, { path, content });
const read = (path: string, ws = 'edge') => server.call('POST', `/v1/workspaces/${ws}/tools/read_file`, { path });
const listing = async (ws = 'edge') =>
  ((await server.call('GET', `/v1/workspaces/${ws}/files?recursive=true`)).body.entries as { path: string }[])
    .map((entry) => entry.path)
    .sort();

beforeAll(async () => {
  await server.call('PUT', '/v1/workspaces/edge');
  await server.call('PUT', '/v1/workspaces/fenced');
  await write('src/a.ts', '// TODO one\nconst a = 1; // TODO two\n');
  await write('src/b.ts', 'const b = 2;\n// TODO three\n');
  await write('README.md', '# edge\n');
  await write('secret.txt', 'FENCED-SECRET\n', 'fenced');
});

describe('bash exec on the edge engine', () => {
  it('answers `grep -rn TODO src | wc -l` on auto with no runner connected, and says where it ran', async () => {
    const answer = await bash({ action: 'exec', command: 'grep -rn TODO src | wc -l' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.result).toMatchObject({
      exitCode: 0,
      stdout: '3\n',
      stderr: '',
      timedOut: false,
      truncated: false,
      engine: 'edge',
    });
    expect(typeof answer.body.result.durationMs).toBe('number');
  });

  it('commits what an edge command changes, at once and together, under the call usage record', async () => {
    const execCalls = async () =>
      ((await server.call('GET', '/v1/usage?groupBy=tool')).body.rows as { group: string; calls: number }[]).find(
        (row) => row.group === 'bash:exec',
      )?.calls ?? 0;
    const before = await execCalls();
    const answer = await bash({
      action: 'exec',
      engine: 'edge',
      command: 'mkdir -p out && grep -rl TODO src | sort > out/todo.txt && mv README.md README.txt && rm src/b.ts',
    });
    expect(answer.body.result).toMatchObject({ exitCode: 0, engine: 'edge' });
    expect((await read('out/todo.txt')).body.result.content).toBe('src/a.ts\nsrc/b.ts\n');
    expect(await listing()).toEqual(['README.txt', 'out', 'out/todo.txt', 'src', 'src/a.ts']);
    expect(await execCalls()).toBe(before + 1);
  });

  it('refuses, on engine "edge", a command it cannot run, naming it, and changes nothing', async () => {
    const files = await listing();
    for (const [command, named] of [
      ['curl -s http://127.0.0.1:1/ > got.txt', 'curl'],
      ['echo start > log.txt; python3 -c "print(1)"', 'python3'],
      ['sleep 1 & echo started > bg.txt', '&'],
      ['gcc -o x x.c', 'gcc'],
    ] as const) {
      const answer = await bash({ action: 'exec', engine: 'edge', command });
      expect(answer.status, command).toBe(400);
      expect(answer.body.error.code).toBe('invalid_argument');
      expect(answer.body.error.message).toContain(named);
      expect(answer.body.error.details.command).toBe(named);
    }
    expect(await listing()).toEqual(files);
  });

  it('leaves to a runner, on auto, what is not proven identical: with none connected that is a 503', async () => {
    const answer = await bash({ action: 'exec', command: 'env | sort > env.txt', timeoutMs: 1000 });
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('unavailable');
    expect(await listing()).not.toContain('env.txt');
    // Past the interpreter's own limits (100,000 loop iterations) auto keeps nothing of the edge's
    // attempt and goes on to a runner, where there are none.
    const long = await bash({ action: 'exec', command: 'seq 1 200000 > seq.txt; tail -1 seq.txt', timeoutMs: 1000 });
    expect(long.status).toBe(503);
    expect(await listing()).not.toContain('seq.txt');
  });

  it('stops a command at timeoutMs (137, timedOut) and cuts output at the answer limit', async () => {
    const slow = await bash({
      action: 'exec',
      engine: 'edge',
      command: 'echo begun; sleep 30; echo never',
      timeoutMs: 300,
    });
    expect(slow.body.result).toMatchObject({ timedOut: true, exitCode: 137, engine: 'edge' });
    expect(slow.body.result.stdout).not.toContain('never');
    // Each seq stays within the interpreter's 100,000 iterations; together they print 1,177,768 characters.
    const loud = await bash({ action: 'exec', engine: 'edge', command: 'seq 1 99999; seq 1 99999' });
    expect(loud.body.result).toMatchObject({ exitCode: 0, truncated: true });
    expect(loud.body.result.stdout.length).toBe(1_048_576);
    expect(loud.body.result.stdout.startsWith('1\n2\n3\n')).toBe(true);
  });

  // wrangler dev runs every object in one workerd thread, so there one object's work delays the
  // others; deployed, each workspace's object is its own, and the edge's work counts against it alone.
  it.skipIf(testHome === 'worker')('answers other calls while an edge command computes (on a thread)', async () => {
    let settled = false;
    const heavy = bash({ action: 'exec', engine: 'edge', command: "seq 1 99999 | sed -n '$p'" }).then((answer) => {
      settled = true;
      return answer;
    });
    // Another tenant's call is answered while the interpreter is still at work.
    const other = await read('secret.txt', 'fenced');
    expect(other.body.result.content).toBe('FENCED-SECRET\n');
    expect(settled).toBe(false);
    expect((await heavy).body.result).toMatchObject({ exitCode: 0, stdout: '99999\n', engine: 'edge' });
  });

  it('reaches nothing outside the workspace, and writes nothing the guard refuses', async () => {
    const files = await listing();
    const peek = await bash({
      action: 'exec',
      engine: 'edge',
      command: 'cat /etc/passwd; cat ../fenced/secret.txt; ls / ; cd .. && ls',
    });
    expect(peek.body.result.stdout).not.toMatch(/root:|FENCED-SECRET/);
    const refused = await bash({ action: 'exec', engine: 'edge', command: 'mkdir -p .ssh && echo k > .ssh/id_rsa' });
    expect(refused.body.result.error).toMatch(/^not synced: .*\.ssh/);
    expect(await listing()).toEqual(files);
    const climb = await bash({ action: 'exec', engine: 'edge', command: 'ls', cwd: '../fenced' });
    expect(climb.status).toBe(403);
    expect(climb.body.error.code).toBe('path_outside_workspace');
  });

  it('refuses a key outside the workspace scope, a bad engine and an oversized command, changing nothing', async () => {
    const files = await listing();
    const fenced = await createKey(server, { name: 'fenced-agent', role: 'agent', workspaces: ['fenced'] });
    const outside = await fenced.call('POST', '/v1/workspaces/edge/tools/bash', {
      action: 'exec',
      engine: 'edge',
      command: 'echo x > x.txt',
    });
    expect(outside.status).toBe(404);
    const badEngine = await bash({ action: 'exec', engine: 'gpu', command: 'echo x > x.txt' });
    expect(badEngine.status).toBe(400);
    expect(badEngine.body.error.code).toBe('invalid_argument');
    const onStart = await bash({ action: 'start', engine: 'edge', command: 'echo x > x.txt' });
    expect(onStart.status).toBe(400);
    expect(onStart.body.error.message).toContain('engine');
    const huge = await bash({ action: 'exec', engine: 'edge', command: `echo ${'x'.repeat(100_001)} > x.txt` });
    expect(huge.status).toBe(400);
    expect(await listing()).toEqual(files);
  });
});

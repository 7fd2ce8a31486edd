// bash over real HTTP with the in-process runner and real bubblewrap: every action of docs/api.md's table.
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { hostProcessesNamed, uniqueSleeps } from '../support/host-processes.ts';
import { removeDir, startServer, useServer } from '../support/server-process.ts';

const MARKER = 'TOOLGATE_TEST_MARKER_must_not_leak';

const server = useServer({
  env: { [MARKER]: 'secret-value', TOOLGATE_MAX_PROCESS_OUTPUT_CHARS: '4096', TOOLGATE_LEASE_MS: '3000' },
});

beforeAll(async () => {
  await server.call('PUT', '/v1/workspaces/sh');
  await server.call('PUT', '/v1/workspaces/other');
});

const bash = (args: Record<string, unknown>, ws = 'sh') => server.call('POST', `/v1/workspaces/${ws}/tools/bash`, args);
const read = (path: string) => server.call('POST', '/v1/workspaces/sh/tools/read_file', { path });
/** The process's status once `wanted` holds for it. */
const waitForStatus = (processId: string, wanted: (status: string) => boolean, ws = 'sh'): Promise<any> =>
  eventually(
    async () => {
      const result = (await bash({ action: 'status', processId }, ws)).body.result;
      return wanted(result.status) && result;
    },
    { what: `process ${processId} to reach the wanted status`, intervalMs: 100 },
  );

describe('exec', () => {
  it('returns exitCode, stdout, stderr, timedOut, durationMs and truncated', async () => {
    const answer = await bash({ action: 'exec', command: 'echo out; echo err >&2; exit 3' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.result).toMatchObject({
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
      truncated: false,
    });
    expect(typeof answer.body.result.durationMs).toBe('number');
  });

  it('sees workspace files, and its changes are visible to read_file when it returns', async () => {
    await server.call('POST', '/v1/workspaces/sh/tools/write_file', { path: 'in/data.txt', content: 'from the api\n' });
    const answer = await bash({
      action: 'exec',
      command: 'cat in/data.txt; mkdir -p out && echo made > out/new.txt && rm in/data.txt',
      cwd: '',
    });
    expect(answer.body.result).toMatchObject({ exitCode: 0, stdout: 'from the api\n' });
    expect((await read('out/new.txt')).body.result.content).toBe('made\n');
    expect((await read('in/data.txt')).status).toBe(404);
  });

  it('honours cwd and env, and shows none of the server or runner variables', async () => {
    await bash({ action: 'exec', command: 'mkdir -p sub/dir' });
    const answer = await bash({
      action: 'exec',
      command: 'pwd; echo "$GREETING"; env',
      cwd: 'sub/dir',
      env: { GREETING: 'hello' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [pwd, greeting] = answer.body.result.stdout.split('\n');
    expect(pwd).toMatch(/sub\/dir$/);
    expect(greeting).toBe('hello');
    expect(answer.body.result.stdout).not.toContain(MARKER);
    expect(answer.body.result.stdout).not.toContain('TOOLGATE_');
    expect(answer.body.result.stdout).not.toContain(server.key);
  });

  it('kills the whole tree at timeoutMs, setsid descendants included, and answers timedOut with 137', async () => {
    const names = uniqueSleeps(3);
    const answer = await bash({
      action: 'exec',
      command: `(${names[0]} &); setsid ${names[1]} & ${names[2]}`,
      timeoutMs: 1500,
    });
    expect(answer.body.result).toMatchObject({ timedOut: true, exitCode: 137 });
    // Each sleep would outlive the test by days: only the kill makes them go.
    await eventually(() => hostProcessesNamed(names).length === 0, { what: 'the whole tree to be gone' });
  });

  it('stores a symlink to the host as a link the guard refuses to follow', async () => {
    await bash({ action: 'exec', command: 'ln -s /etc hostetc' });
    const listing = await server.call('GET', '/v1/workspaces/sh/files');
    expect(listing.body.entries.find((entry: any) => entry.path === 'hostetc')).toMatchObject({ type: 'symlink' });
    const answer = await read('hostetc/passwd');
    expect(answer.body.error.code).toBe('path_outside_workspace');
  });
});

describe('start, status, logs, write, stop, list', () => {
  it('starts in the background and pages its logs byte for byte', async () => {
    const started = await bash({ action: 'start', command: 'for i in $(seq 1 200); do echo "line $i"; done' });
    expect(started.status).toBe(200);
    const { processId } = started.body.result;
    expect(Object.keys(started.body.result).sort()).toEqual([
      'command',
      'cwd',
      'endedAt',
      'exitCode',
      'pid',
      'processId',
      'startedAt',
      'status',
    ]);
    const ended = await waitForStatus(processId, (status) => status === 'exited');
    expect(ended.exitCode).toBe(0);
    const expected = Array.from({ length: 200 }, (_, i) => `line ${i + 1}\n`).join('');
    let collected = '';
    for (let offset = 0; ;) {
      const page = (await bash({ action: 'logs', processId, offset, limit: 100 })).body.result;
      expect(page.offset).toBe(offset);
      collected += page.data;
      if (page.data === '') break;
      expect(page.nextOffset).toBe(offset + page.data.length);
      offset = page.nextOffset;
    }
    expect(collected).toBe(expected);
  });

  it('keeps only the last maxProcessOutputChars and says truncated', async () => {
    // On a runner, whose exec leaves a process and its log (the edge leaves neither).
    const answer = await bash({
      action: 'exec',
      command: 'head -c 20000 /dev/zero | tr "\\0" x; echo END',
      engine: 'runner',
    });
    expect(answer.body.result.exitCode).toBe(0);
    const list = (await bash({ action: 'list' })).body.result.processes;
    const processId = list[list.length - 1].processId;
    const page = (await bash({ action: 'logs', processId, offset: 0, limit: 1_000_000 })).body.result;
    expect(page.truncated).toBe(true);
    expect(page.startOffset).toBeGreaterThan(0);
    expect(page.offset).toBe(page.startOffset);
    expect(page.data.length).toBeGreaterThanOrEqual(4096);
    expect(page.data.endsWith('xEND\n')).toBe(true);
    expect(page.nextOffset).toBe(20004);
  });

  it('counts dropped output in UTF-16 units and keeps the held tail exact, surrogate pairs whole', async () => {
    const answer = await bash({
      action: 'exec',
      command: "for i in $(seq 1 3000); do printf 'é😀x'; done; echo END",
      engine: 'runner',
    });
    expect(answer.body.result.exitCode).toBe(0);
    const full = `${'é😀x'.repeat(3000)}END\n`;
    const list = (await bash({ action: 'list' })).body.result.processes;
    const processId = list[list.length - 1].processId;
    const page = (await bash({ action: 'logs', processId, offset: 0, limit: 1_000_000 })).body.result;
    expect(page).toMatchObject({ truncated: true, nextOffset: full.length });
    expect(page.offset).toBeLessThanOrEqual(full.length - 4096);
    expect(page.data).toBe(full.slice(page.offset));
  });

  it('feeds stdin to cat and to read, and eof closes it', async () => {
    const started = (await bash({ action: 'start', command: 'read first; echo "got:$first"; cat' })).body.result;
    await waitForStatus(started.processId, (status) => status === 'running');
    expect((await bash({ action: 'write', processId: started.processId, input: 'hello\n' })).body.result).toEqual({
      processId: started.processId,
      bytesWritten: 6,
    });
    await bash({ action: 'write', processId: started.processId, input: 'rest of it\n', eof: true });
    const ended = await waitForStatus(started.processId, (status) => status === 'exited');
    expect(ended.exitCode).toBe(0);
    const logs = (await bash({ action: 'logs', processId: started.processId })).body.result;
    expect(logs.data).toBe('got:hello\nrest of it\n');
  });

  it('stops a process that traps TERM: it may clean up, and ends stopped', async () => {
    const started = (
      await bash({
        action: 'start',
        command: "trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done",
      })
    ).body.result;
    // Once it says ready its trap is set.
    await eventually(
      async () => (await bash({ action: 'logs', processId: started.processId })).body.result.data.includes('ready'),
      { what: 'the process to set its trap' },
    );
    const stopping = await bash({ action: 'stop', processId: started.processId, graceMs: 3000 });
    expect(stopping.status).toBe(200);
    const ended = await waitForStatus(started.processId, (status) => status === 'stopped');
    expect(ended.exitCode).toBe(0);
    expect((await bash({ action: 'logs', processId: started.processId })).body.result.data).toContain('bye');
  });

  it('lists processes, and a process is invisible from another workspace', async () => {
    const started = (await bash({ action: 'start', command: 'true' })).body.result;
    const list = (await bash({ action: 'list' })).body.result.processes;
    expect(list.map((entry: any) => entry.processId)).toContain(started.processId);
    expect((await bash({ action: 'list' }, 'other')).body.result.processes).toEqual([]);
    expect((await bash({ action: 'status', processId: started.processId }, 'other')).body.error.code).toBe('not_found');
    expect((await bash({ action: 'status', processId: 'proc_unknown' })).status).toBe(404);
  });

  it('refuses arguments that do not belong to the action', async () => {
    expect((await bash({ action: 'exec' })).body.error.code).toBe('invalid_argument');
    expect((await bash({ action: 'list', command: 'ls' })).body.error.code).toBe('invalid_argument');
    expect((await bash({ action: 'exec', command: 'true', cwd: '../x' })).body.error.code).toBe(
      'path_outside_workspace',
    );
  });
});

describe('sync-back and availability', () => {
  it('never overwrites a file changed through the API while the command ran: it is a conflict', async () => {
    await server.call('POST', '/v1/workspaces/sh/tools/write_file', { path: 'shared.txt', content: 'original\n' });
    const started = (
      await bash({ action: 'start', command: 'sleep 1; echo "from the command" > shared.txt; echo new > own.txt' })
    ).body.result;
    await waitForStatus(started.processId, (status) => status === 'running');
    await server.call('POST', '/v1/workspaces/sh/tools/write_file', { path: 'shared.txt', content: 'from the api\n' });
    const ended = await waitForStatus(started.processId, (status) => status === 'exited');
    expect(ended.conflicts).toEqual(['shared.txt']);
    expect((await read('shared.txt')).body.result.content).toBe('from the api\n');
    expect((await read('own.txt')).body.result.content).toBe('new\n');
    // The runner's copy follows the API's version afterwards.
    expect((await bash({ action: 'exec', command: 'cat shared.txt' })).body.result.stdout).toBe('from the api\n');
  });

  it('tells an exec caller which files were left to the API version, in the exec answer itself', async () => {
    await server.call('POST', '/v1/workspaces/sh/tools/write_file', { path: 'raced.txt', content: 'original\n' });
    const command = 'sleep 1; echo "from exec" > raced.txt; echo done';
    const exec = bash({ action: 'exec', command, engine: 'runner' });
    // Once the command runs (its copy of raced.txt is the original), a write lands through the API.
    await eventually(
      async () => {
        const listed = (await bash({ action: 'list' })).body.result.processes as { command: string; status: string }[];
        return listed.some((process) => process.command === command && process.status === 'running');
      },
      { what: 'the exec to run', intervalMs: 20 },
    );
    await server.call('POST', '/v1/workspaces/sh/tools/write_file', { path: 'raced.txt', content: 'from the api\n' });
    const answer = (await exec).body.result;
    expect(answer).toMatchObject({ exitCode: 0, stdout: 'done\n', conflicts: ['raced.txt'] });
    expect((await read('raced.txt')).body.result.content).toBe('from the api\n');
    // A clean exec carries neither field.
    const clean = (await bash({ action: 'exec', command: 'true' })).body.result;
    expect(clean.conflicts).toBeUndefined();
    expect(clean.error).toBeUndefined();
  });

  it("does not sync back what a command wrote in .git/hooks or a submodule's hooks, and names it in the error", async () => {
    const command =
      'mkdir -p .git/hooks .git/modules/x/hooks && echo hook > .git/hooks/pre-commit && echo hook > .git/modules/x/hooks/post-checkout && echo c > .git/modules/x/config && echo kept > kept.txt';
    const answer = (await bash({ action: 'exec', command, engine: 'runner' })).body.result;
    expect(answer.exitCode).toBe(0);
    expect(answer.error).toContain('.git/hooks/pre-commit');
    expect(answer.error).toContain('.git/modules/x/hooks/post-checkout');
    const list = (await bash({ action: 'list' })).body.result.processes as { processId: string; command: string }[];
    const status = (
      await bash({ action: 'status', processId: list.find((entry) => entry.command === command)!.processId })
    ).body.result;
    expect(status.error).toContain('.git/modules/x/hooks/post-checkout');
    expect((await read('.git/hooks/pre-commit')).body.error.code).toBe('not_found');
    expect((await read('.git/modules/x/hooks/post-checkout')).body.error.code).toBe('not_found');
    // The rest of what the command did is synced.
    expect((await read('kept.txt')).body.result.content).toBe('kept\n');
    expect((await read('.git/modules/x/config')).body.result.content).toBe('c\n');
  });

  it('a deleted workspace takes its processes with it', async () => {
    await server.call('PUT', '/v1/workspaces/gone');
    const started = (await bash({ action: 'start', command: 'sleep 30' }, 'gone')).body.result;
    expect((await server.call('DELETE', '/v1/workspaces/gone')).status).toBe(204);
    await server.call('PUT', '/v1/workspaces/gone');
    expect((await bash({ action: 'status', processId: started.processId }, 'gone')).status).toBe(404);
    expect((await bash({ action: 'list' }, 'gone')).body.result.processes).toEqual([]);
  });
});

describe('without a runner', () => {
  it('start stays queued and exec answers 503 unavailable after its timeout', async () => {
    const lonely = await startServer({ env: { TOOLGATE_RUNNER: 'off' } });
    try {
      await lonely.call('PUT', '/v1/workspaces/q');
      const started = await lonely.call('POST', '/v1/workspaces/q/tools/bash', { action: 'start', command: 'true' });
      expect(started.body.result.status).toBe('queued');
      const exec = await lonely.call('POST', '/v1/workspaces/q/tools/bash', {
        action: 'exec',
        command: 'true',
        // On a runner: auto would answer `true` in the handler, with no runner needed.
        engine: 'runner',
        timeoutMs: 300,
      });
      expect({ status: exec.status, code: exec.body.error?.code }).toEqual({ status: 503, code: 'unavailable' });
      const status = await lonely.call('POST', '/v1/workspaces/q/tools/bash', {
        action: 'status',
        processId: started.body.result.processId,
      });
      expect(status.body.result.status).toBe('queued');
    } finally {
      await lonely.stop();
      removeDir(lonely.dataDir);
    }
  });
});

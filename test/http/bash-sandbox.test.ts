// docs/api.md "Sandbox and resources" and "Live processes" over real HTTP and real bubblewrap, on both
// homes: commands run as their own user, never see the data directory, and a started process has
// one output stream, or a terminal.
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer({ env: { TOOLGATE_LEASE_MS: '3000' } });
const WS = 'sandboxed';
const runnerIsRoot = process.getuid?.() === 0;

beforeAll(async () => {
  await server.call('PUT', `/v1/workspaces/${WS}`);
});

// exec on a runner: its sandbox is what is tested (auto would answer some commands in the handler).
const bash = (args: Record<string, unknown>) =>
  server.call('POST', `/v1/workspaces/${WS}/tools/bash`, args.action === 'exec' ? { engine: 'runner', ...args } : args);
async function exec(command: string): Promise<any> {
  const answer = await bash({ action: 'exec', command });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.result;
}

/** Starts a process and answers its whole log once it has ended. */
async function startToEnd(args: Record<string, unknown>): Promise<{ status: string; exitCode: number; data: string }> {
  const started = await bash({ action: 'start', ...args });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const { processId } = started.body.result;
  const status = await eventually(
    async () => {
      const current = (await bash({ action: 'status', processId })).body.result;
      return !['queued', 'running'].includes(current.status) && current;
    },
    { what: `process ${processId} to end`, intervalMs: 100 },
  );
  const logs = (await bash({ action: 'logs', processId, limit: 1_048_576 })).body.result;
  return { status: status.status, exitCode: status.exitCode, data: logs.data };
}

describe('commands never run as the server user', () => {
  it.skipIf(!runnerIsRoot)('run as TOOLGATE_RUNNER_UID (65534 by default) when the server is root', async () => {
    expect(await exec('id -u; id -g')).toMatchObject({ exitCode: 0, stdout: '65534\n65534\n' });
  });

  it('reach the tools the host links through /etc/alternatives (awk) as that user', async () => {
    // The directories the sandbox makes above its /etc files are every user's to search.
    expect(await exec("awk 'BEGIN { print 6 * 7 }'; stat -c %a /etc")).toMatchObject({
      exitCode: 0,
      stdout: '42\n755\n',
    });
  });

  it('cannot read anything of the data directory', async () => {
    const result = await exec(`cat ${server.dataDir}/toolgate.db; ls ${server.dataDir}; echo done`);
    expect(result.stdout).toBe('done\n');
    expect(result.stderr).toMatch(/No such file or directory/);
  });

  it('leave files that sync back, and can change files written through the API', async () => {
    await server.call('POST', `/v1/workspaces/${WS}/tools/write_file`, {
      path: 'notes/api.txt',
      content: 'from the api\n',
    });
    expect(
      await exec('echo more >> notes/api.txt && mkdir -p made && echo "by $(id -u)" > made/file.txt'),
    ).toMatchObject({ exitCode: 0, stderr: '' });
    const made = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'made/file.txt' });
    expect(made.body.result.content).toBe(runnerIsRoot ? 'by 65534\n' : `by ${process.getuid?.()}\n`);
    const changed = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'notes/api.txt' });
    expect(changed.body.result.content).toBe('from the api\nmore\n');
    // A started process (bound to the copy itself, not an overlay) changes the same files.
    expect(await startToEnd({ command: 'echo again >> notes/api.txt' })).toMatchObject({
      status: 'exited',
      exitCode: 0,
    });
    const again = await server.call('POST', `/v1/workspaces/${WS}/tools/read_file`, { path: 'notes/api.txt' });
    expect(again.body.result.content).toBe('from the api\nmore\nagain\n');
  });

  it('keep writing where an earlier exec made a directory and moved another into it', async () => {
    expect(await exec('mkdir -p old/sub && echo a > old/sub/f && echo b > old/g')).toMatchObject({ exitCode: 0 });
    // The overlay shows `new` as a directory with a renamed one and a deletion below: the runner makes it anew in the copy.
    expect(await exec('mkdir new && mv old/sub new/ && rm old/g')).toMatchObject({ exitCode: 0, stderr: '' });
    expect(await exec('touch new/x old/y new/sub/z && echo ok')).toMatchObject({
      exitCode: 0,
      stdout: 'ok\n',
      stderr: '',
    });
  });
});

describe('the output of a started process', () => {
  it('is one stream in the order the process wrote it', async () => {
    expect(await startToEnd({ command: 'echo out; echo err 1>&2; echo out2' })).toEqual({
      status: 'exited',
      exitCode: 0,
      data: 'out\nerr\nout2\n',
    });
  });

  it('is a terminal of 120 x 40 with tty: true, or of the size asked', async () => {
    const terminal = await startToEnd({ command: 'tty; stty size', tty: true });
    expect(terminal).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(terminal.data).toMatch(/^\/dev\/pts\/\d+\r\n40 120\r\n$/);
    expect((await startToEnd({ command: 'stty size', tty: true, cols: 80, rows: 24 })).data).toBe('24 80\r\n');
  });

  it('refuses a terminal for exec, and a size without one', async () => {
    const execTty = await bash({ action: 'exec', command: 'tty', tty: true });
    expect(execTty.status).toBe(400);
    expect(execTty.body.error).toMatchObject({ code: 'invalid_argument' });
    expect(execTty.body.error.message).toContain('tty');
    const sizeOnly = await bash({ action: 'start', command: 'true', cols: 80 });
    expect(sizeOnly.status).toBe(400);
    expect(sizeOnly.body.error.message).toContain('cols');
    for (const cols of [0, 1001, 1.5])
      expect((await bash({ action: 'start', command: 'true', tty: true, cols })).status).toBe(400);
  });
});

describe('/healthz', () => {
  it('answers {"ok": true} when commands run sandboxed', async () => {
    expect((await server.call('GET', '/healthz')).body).toEqual({ ok: true });
  });
});

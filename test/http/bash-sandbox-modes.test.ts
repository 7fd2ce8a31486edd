// docs/api.md "Sandbox and resources" over real HTTP, on both homes: without bubblewrap bash answers
// 503 naming what to install, and TOOLGATE_SANDBOX=none runs commands unsandboxed on purpose,
// saying so at start and in /healthz.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { removeDir, startServer, type ServerProcess } from '../support/server-process.ts';

/** A server of its own for a describe block, with these variables. */
function serverWith(env: Record<string, string>): () => ServerProcess {
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    server = await startServer({ env: { TOOLGATE_LEASE_MS: '3000', ...env } });
    await server.call('PUT', '/v1/workspaces/modes');
  });
  afterAll(async () => {
    if (!server) return;
    await server.stop();
    removeDir(server.dataDir);
  });
  return () => server!;
}

describe('a runner without bubblewrap (TOOLGATE_BWRAP_PATH names a missing file)', () => {
  const server = serverWith({ TOOLGATE_BWRAP_PATH: '/nonexistent/toolgate-test/bwrap' });
  const bash = (args: Record<string, unknown>) => server().call('POST', '/v1/workspaces/modes/tools/bash', args);

  it('warns at start that commands are refused, naming what to install', () => {
    expect(server().output()).toMatch(/WARNING: .*bubblewrap is not installed .*apt-get install bubblewrap/);
  });

  it('answers exec with 503 unavailable naming bubblewrap, and runs nothing', async () => {
    const answer = await bash({ action: 'exec', command: 'echo ran > ran.txt', engine: 'runner' });
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('unavailable');
    expect(answer.body.error.message).toContain('apt-get install bubblewrap');
    expect((await server().call('POST', '/v1/workspaces/modes/tools/read_file', { path: 'ran.txt' })).status).toBe(404);
    // The edge engine starts no process, so it needs no sandbox: auto still answers what it runs.
    const onEdge = await bash({ action: 'exec', command: 'echo ran > ran.txt' });
    expect(onEdge.body.result).toMatchObject({ exitCode: 0, engine: 'edge' });
  });

  it('fails a started process with the same reason', async () => {
    const { processId } = (await bash({ action: 'start', command: 'sleep 1' })).body.result;
    const status = await eventually(
      async () => {
        const current = (await bash({ action: 'status', processId })).body.result;
        return current.status !== 'queued' && current;
      },
      { what: `process ${processId} to leave the queue`, intervalMs: 100 },
    );
    expect(status.status).toBe('failed');
    expect(status.error).toContain('bubblewrap');
  });

  it('keeps /healthz as it is: the sandbox is not turned off', async () => {
    expect((await server().call('GET', '/healthz')).body).toEqual({ ok: true });
  });
});

describe('TOOLGATE_SANDBOX=none', () => {
  const server = serverWith({ TOOLGATE_SANDBOX: 'none' });

  it('says so at start and in /healthz', async () => {
    expect(server().output()).toMatch(/WARNING: TOOLGATE_SANDBOX=none/);
    expect((await server().call('GET', '/healthz')).body).toEqual({ ok: true, sandbox: 'none' });
  });

  it('runs commands, unsandboxed, in their own process group', async () => {
    const answer = await server().call('POST', '/v1/workspaces/modes/tools/bash', {
      action: 'exec',
      command: 'echo made > made.txt; ps -o pgid= -p $$ | tr -d " "; echo $$',
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const [group, shell] = answer.body.result.stdout.trim().split('\n');
    expect(group).toBe(shell);
    expect(
      (await server().call('POST', '/v1/workspaces/modes/tools/read_file', { path: 'made.txt' })).body.result.content,
    ).toBe('made\n');
  });
});

// Live control over real HTTP with real bubblewrap: stdin and stop reach a running process at once,
// on the server's own runner and on a separate `toolgate runner`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { hostProcessesNamed, uniqueSleeps } from '../support/host-processes.ts';
import { createRunnerKey } from '../support/keys.ts';
import { startRunner } from '../support/runner-process.ts';
import { makeDataDir, removeDir, useServer, type ServerProcess } from '../support/server-process.ts';

// A lease of a minute renews every 20 s: stdin or a stop riding on renewals would outlast each test.
const LEASE = { TOOLGATE_LEASE_MS: '60000' };

function liveControl(label: string, server: ServerProcess, ws: string): void {
  const bash = (args: Record<string, unknown>) => server.call('POST', `/v1/workspaces/${ws}/tools/bash`, args);

  /** The process's status once `wanted` holds for it. */
  const waitForStatus = (processId: string, wanted: (status: string) => boolean): Promise<any> =>
    eventually(
      async () => {
        const result = (await bash({ action: 'status', processId })).body.result;
        return wanted(result.status) && result;
      },
      { what: `process ${processId} to reach the wanted status`, intervalMs: 50 },
    );

  /** Waits until the log holds `text` past `offset`; answers the offset after it. */
  async function waitForLog(processId: string, offset: number, text: string): Promise<number> {
    let log = '';
    return eventually(
      async () => {
        const page = (await bash({ action: 'logs', processId, offset })).body.result;
        log += page.data;
        offset = page.nextOffset;
        const at = log.indexOf(text);
        return at !== -1 && offset - (log.length - at - text.length);
      },
      { what: `the log of ${processId} to show ${JSON.stringify(text)}`, intervalMs: 10 },
    );
  }

  /** Waits until none of `names` runs on the host. */
  const treeGone = (names: string[]) =>
    eventually(() => hostProcessesNamed(names).length === 0, { what: `none of ${names.join(', ')} to run` });

  describe(label, () => {
    it('feeds each of 20 writes to a read loop, each echo in the logs before the next write', async () => {
      const started = (await bash({ action: 'start', command: 'while read x; do echo "got $x"; done' })).body.result;
      await waitForStatus(started.processId, (status) => status === 'running');
      let offset = 0;
      for (let i = 1; i <= 20; i += 1) {
        const written = await bash({ action: 'write', processId: started.processId, input: `line-${i}\n` });
        expect(written.body.result).toEqual({ processId: started.processId, bytesWritten: `line-${i}\n`.length });
        offset = await waitForLog(started.processId, offset, `got line-${i}\n`);
      }
      await bash({ action: 'write', processId: started.processId, input: '', eof: true });
      const ended = await waitForStatus(started.processId, (status) => status === 'exited');
      expect(ended.exitCode).toBe(0);
      const log = (await bash({ action: 'logs', processId: started.processId, offset: 0 })).body.result.data;
      expect(log).toBe(Array.from({ length: 20 }, (_, i) => `got line-${i + 1}\n`).join(''));
    });

    it('stops a process that ignores TERM with graceMs 0: it ends stopped and its tree is gone', async () => {
      const names = uniqueSleeps(1);
      const started = (await bash({ action: 'start', command: `trap '' TERM; echo ready; ${names[0]}` })).body.result;
      await waitForStatus(started.processId, (status) => status === 'running');
      await waitForLog(started.processId, 0, 'ready\n');
      expect(hostProcessesNamed(names)).not.toEqual([]);
      const stopping = await bash({ action: 'stop', processId: started.processId, graceMs: 0 });
      expect(stopping.status).toBe(200);
      const ended = await waitForStatus(started.processId, (status) => status !== 'running');
      expect(ended.status).toBe('stopped');
      await treeGone(names);
    });

    it('stop with graceMs 500 on a tree that ignores TERM leaves none of the tree once it ends', async () => {
      const names = uniqueSleeps(3);
      const command = `trap '' TERM; ${names[0]} & (${names[1]}) & setsid ${names[2]} & echo ready; wait`;
      const started = (await bash({ action: 'start', command })).body.result;
      await waitForStatus(started.processId, (status) => status === 'running');
      await waitForLog(started.processId, 0, 'ready\n');
      const stopping = await bash({ action: 'stop', processId: started.processId, graceMs: 500 });
      expect(stopping.status).toBe(200);
      const ended = await waitForStatus(started.processId, (status) => status !== 'running');
      expect(ended.status).toBe('stopped');
      await treeGone(names);
    });

    it('a TERM trap runs and the process ends stopped without waiting out its grace', async () => {
      const started = (
        await bash({
          action: 'start',
          command: "trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done",
        })
      ).body.result;
      await waitForLog(started.processId, 0, 'ready\n');
      await bash({ action: 'stop', processId: started.processId, graceMs: 60_000 });
      const ended = await waitForStatus(started.processId, (status) => status !== 'running');
      expect(ended).toMatchObject({ status: 'stopped', exitCode: 0 });
      expect((await bash({ action: 'logs', processId: started.processId, offset: 0 })).body.result.data).toMatch(
        /bye\n$/,
      );
    });
  });
}

describe("on the server's own runner", () => {
  const server = useServer({ env: LEASE });
  beforeAll(async () => {
    await server.call('PUT', '/v1/workspaces/live-own');
  });
  liveControl('stdin and stop', server, 'live-own');
});

describe('on a separate toolgate runner', () => {
  const server = useServer({ env: { ...LEASE, TOOLGATE_RUNNER: 'off' } });
  const runnerDir = makeDataDir();
  let stopRunner: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    await server.call('PUT', '/v1/workspaces/live-separate');
    const runner = await startRunner(server.url, (await createRunnerKey(server)).secret, runnerDir);
    stopRunner = () => runner.kill();
  });
  afterAll(async () => {
    await stopRunner?.();
    removeDir(runnerDir);
  });
  liveControl('stdin and stop', server, 'live-separate');
});

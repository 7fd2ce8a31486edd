// toolgate logs as a user runs it: a process's output on stdout to its end, the snapshot on stderr;
// a bad offset is a usage error, an unknown process the server's not_found.
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { useServer } from '../support/server-process.ts';
import { runToolgate } from '../support/toolgate-command.ts';

const server = useServer();
const WS = 'cli-logs';

const toolgate = (args: string[]) => runToolgate(server, args);

const bash = async (args: Record<string, unknown>) =>
  (await server.call('POST', `/v1/workspaces/${WS}/tools/bash`, args)).body.result;

beforeAll(async () => {
  await server.call('PUT', `/v1/workspaces/${WS}`);
});

describe('toolgate logs', () => {
  it('writes the output as the process runs, from --offset, and the snapshot on stderr once it ends', async () => {
    const { processId } = await bash({ action: 'start', command: 'seq 1 5; read go; seq 6 10' });
    const following = toolgate(['logs', WS, processId, '--offset', '2']);
    // The process waits for its input until the command has shown the first half: then it is fed.
    await eventually(async () => (await bash({ action: 'logs', processId })).data === '1\n2\n3\n4\n5\n');
    await bash({ action: 'write', processId, input: 'go\n' });
    const run = await following;
    expect(run.code, run.stderr).toBe(0);
    expect(run.text).toBe('2\n3\n4\n5\n6\n7\n8\n9\n10\n');
    expect(JSON.parse(run.stderr)).toEqual(await bash({ action: 'status', processId }));
  });

  it('refuses a bad offset as a usage error and reports an unknown process as the server does', async () => {
    const bad = await toolgate(['logs', WS, 'proc_x', '--offset', '1.5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--offset must be a whole number/);
    const unknown = await toolgate(['logs', WS, 'proc_00000000000000000000000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not_found/);
  });
});

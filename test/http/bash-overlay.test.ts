// An exec that deletes, recreates and renames files leaves the workspace exactly so, over real HTTP with the in-process runner.
import { beforeAll, describe, expect, it } from 'vitest';
import { detectOverlay } from '../../src/runner/node/overlay.ts';
import { eventually } from '../support/eventually.ts';
import { useServer } from '../support/server-process.ts';

const server = useServer();

// On a runner: the overlay is the runner's (auto would answer many of these commands in the handler).
const bash = (command: string) =>
  server.call('POST', '/v1/workspaces/ov/tools/bash', { action: 'exec', command, engine: 'runner' });
const read = (path: string) => server.call('POST', '/v1/workspaces/ov/tools/read_file', { path });
const write = (path: string, content: string) =>
  server.call('POST', '/v1/workspaces/ov/tools/write_file', { path, content });

async function listing(): Promise<string[]> {
  const answer = await server.call('GET', '/v1/workspaces/ov/files?recursive=true');
  return answer.body.entries
    .map(
      (entry: { path: string; type: string; target?: string }) =>
        `${entry.type} ${entry.path}${entry.target ? ` -> ${entry.target}` : ''}`,
    )
    .sort();
}

beforeAll(async () => {
  await server.call('PUT', '/v1/workspaces/ov');
  for (const [path, content] of Object.entries({
    'a.txt': 'a\n',
    'dir/b.txt': 'b\n',
    'dir/sub/c.txt': 'c\n',
    'old/x.txt': 'x\n',
    'old/deep/y.txt': 'y\n',
    'keep.txt': 'keep\n',
  })) {
    expect((await write(path, content)).status).toBe(200);
  }
});

describe('exec changing files', () => {
  it('says at start-up how exec changes are found', () => {
    const probe = detectOverlay();
    expect(server.output()).toContain(
      probe.support ? 'exec changes are tracked by an overlay' : 'exec changes are found by a full scan',
    );
  });

  it('deletes, recreates and renames exactly what the command did, exec after exec', async () => {
    expect((await bash('cat a.txt')).body.result).toMatchObject({ exitCode: 0, stdout: 'a\n' });
    const changed = await bash(
      'rm a.txt && rm -r dir && mkdir dir && echo again > dir/b.txt && mv old new && mv keep.txt kept.txt && echo fresh > a.txt && ln -s new/x.txt x-link',
    );
    expect(changed.body.result).toMatchObject({ exitCode: 0, stderr: '' });
    expect(await listing()).toEqual([
      'dir dir',
      'dir new',
      'dir new/deep',
      'file a.txt',
      'file dir/b.txt',
      'file kept.txt',
      'file new/deep/y.txt',
      'file new/x.txt',
      'symlink x-link -> new/x.txt',
    ]);
    expect((await read('a.txt')).body.result.content).toBe('fresh\n');
    expect((await read('dir/b.txt')).body.result.content).toBe('again\n');
    expect((await read('new/deep/y.txt')).body.result.content).toBe('y\n');
    expect((await read('kept.txt')).body.result.content).toBe('keep\n');
    for (const gone of ['dir/sub/c.txt', 'old/x.txt', 'keep.txt']) expect((await read(gone)).status, gone).toBe(404);

    // The runner's copy holds the same for the next command, and an API write in between reaches it.
    expect((await write('dir/b.txt', 'from the api\n')).status).toBe(200);
    const seen = await bash('find . -mindepth 1 | sort && cat dir/b.txt x-link');
    expect(seen.body.result.stdout).toBe(
      [
        './a.txt',
        './dir',
        './dir/b.txt',
        './kept.txt',
        './new',
        './new/deep',
        './new/deep/y.txt',
        './new/x.txt',
        './x-link',
        'from the api',
        'x',
        '',
      ].join('\n'),
    );

    // A command that deletes everything and fails half way keeps what it did before failing.
    const failed = await bash('rm -rf -- * && echo left > left.txt && false && echo never > never.txt');
    expect(failed.body.result.exitCode).toBe(1);
    expect(await listing()).toEqual(['file left.txt']);
  });

  it('keeps the changes of execs and of a started process that run at once on one workspace', async () => {
    const started = await server.call('POST', '/v1/workspaces/ov/tools/bash', {
      action: 'start',
      command: 'echo s > started.txt && sleep 1 && echo s2 >> started.txt',
    });
    expect(started.status).toBe(200);
    const [first, second] = await Promise.all([
      bash('sleep 0.3 && echo one > one.txt && rm left.txt'),
      bash('echo two > two.txt && mkdir -p nested/dir && echo deep > nested/dir/f'),
    ]);
    expect([first.body.result.exitCode, second.body.result.exitCode]).toEqual([0, 0]);
    await eventually(
      async () => {
        const status = await server.call('POST', '/v1/workspaces/ov/tools/bash', {
          action: 'status',
          processId: started.body.result.processId,
        });
        return status.body.result.status !== 'running' && status.body.result.status !== 'queued';
      },
      { what: 'the started process to end', intervalMs: 100 },
    );
    expect(await listing()).toEqual([
      'dir nested',
      'dir nested/dir',
      'file nested/dir/f',
      'file one.txt',
      'file started.txt',
      'file two.txt',
    ]);
    expect((await read('started.txt')).body.result.content).toBe('s\ns2\n');
    expect((await read('nested/dir/f')).body.result.content).toBe('deep\n');
  });
});

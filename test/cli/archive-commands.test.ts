// toolgate download and upload as a user runs them: a tar file goes up in one commit and comes back
// to a file (tgz by its name) or to stdout; a refused archive exits 1 with the contract's code.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDataDir, removeDir, useServer } from '../support/server-process.ts';
import { runToolgate } from '../support/toolgate-command.ts';
import { tarBytes } from '../support/tar-bytes.ts';

const server = useServer({ env: { TOOLGATE_RUNNER: 'off' } });
const scratch = makeDataDir();
afterAll(() => removeDir(scratch));

const toolgate = (args: string[]) => runToolgate(server, args);

describe('toolgate upload and download', () => {
  it('uploads a tgz made by GNU tar, then downloads it to a .tgz file and as a tar on stdout', async () => {
    const tree = join(scratch, 'tree');
    mkdirSync(join(tree, 'src/empty'), { recursive: true });
    writeFileSync(join(tree, 'src/a.txt'), 'hello\n');
    const archive = join(scratch, 'up.tgz');
    execFileSync('tar', ['-czf', archive, '-C', tree, 'src']);
    await server.client.putWorkspace('cli-archive');

    const up = await toolgate(['upload', 'cli-archive', archive, '--prefix', 'app', '--mode', 'replace']);
    expect(up.code, up.stderr).toBe(0);
    expect(JSON.parse(up.stdout.toString())).toMatchObject({ files: 1, directories: 2, bytes: 6, deleted: 0 });

    const file = join(scratch, 'down.tgz');
    const down = await toolgate(['download', 'cli-archive', file, '--prefix', 'app']);
    expect(down).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(file).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(execFileSync('tar', ['-tzf', file]).toString().split('\n').filter(Boolean)).toEqual([
      'src/',
      'src/a.txt',
      'src/empty/',
    ]);

    const piped = await toolgate(['download', 'cli-archive']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(execFileSync('tar', ['-t'], { input: piped.stdout }).toString()).toContain('app/src/a.txt');
  });

  it('a refused archive exits 1 with the code on stderr; bad flags are usage errors', async () => {
    const bad = join(scratch, 'bad.tar');
    writeFileSync(bad, tarBytes([{ name: '.ssh/authorized_keys', content: 'key' }]));
    const refused = await toolgate(['upload', 'cli-archive', bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('path_denied (HTTP 403)');
    for (const args of [
      ['upload', 'cli-archive'],
      ['upload', 'cli-archive', bad, '--mode', 'overwrite'],
      ['download', 'cli-archive', '--format', 'zip'],
      ['upload', 'cli-archive', join(scratch, 'missing.tar')],
    ]) {
      const run = await toolgate(args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('Usage: toolgate');
    }
    const help = await toolgate(['download', '--help']);
    expect(help.stdout.toString()).toMatch(/^Usage: toolgate download <workspace> \[file\]/);
  });
});

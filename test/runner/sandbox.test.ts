// Running one command on this host: output, exit codes, stdin, environment, cwd, files and network, in every isolation mode.
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isToolError } from '../../src/core/errors.ts';
import { bubblewrapInstalled, describeIsolation, startCommand } from '../../src/runner/node/sandbox.ts';
import { bwrapSkipReason, isolationModes, removeWorkspaces, run, start, tempWorkspace } from './sandbox-fixtures.ts';

const RUNNER_SECRET = 'TOOLGATE_SANDBOX_TEST_RUNNER_SECRET';
let server: Server;
let port = 0;

beforeAll(async () => {
  process.env[RUNNER_SECRET] = 'must-not-leak';
  server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  delete process.env[RUNNER_SECRET];
  await new Promise((resolve) => server.close(resolve));
});

afterEach(removeWorkspaces);

describe.each(isolationModes)('startCommand with $isolation isolation', ({ isolation, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('delivers stdout and stderr separately', async () => {
    const result = await run('echo out; echo err >&2; echo out2', { isolation });
    expect(result).toMatchObject({ exitCode: 0, signal: null, stdout: 'out\nout2\n', stderr: 'err\n' });
  });

  it('reports the exit status, or 128 + the signal number when a signal ends the shell', async () => {
    expect((await run('exit 3', { isolation })).exitCode).toBe(3);
    expect((await run('kill -9 $$', { isolation })).exitCode).toBe(137);
    expect((await run('kill -TERM $$', { isolation })).exitCode).toBe(143);
  });

  it('feeds stdin to the command', async () => {
    expect(await run('cat', { isolation, input: 'hello\nworld\n' })).toMatchObject({
      exitCode: 0,
      stdout: 'hello\nworld\n',
    });
    expect((await run('read line; echo got:$line', { isolation, input: 'abc\n' })).stdout).toBe('got:abc\n');
  });

  it('ignores input once the command has exited', async () => {
    const started = start('exit 0', { isolation });
    await started.command.exited;
    started.command.write('late');
    started.command.endInput();
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null });
  });

  it('gives the command end of file when input ends', async () => {
    const result = await run('cat; echo "[eof]"', { isolation, input: 'no newline' });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'no newline[eof]\n' });
  });

  it("passes only the minimal environment and the caller's variables", async () => {
    expect(process.env[RUNNER_SECRET]).toBe('must-not-leak');
    const result = await run('env', { isolation, env: { CALLER_VAR: 'from caller', LANG: 'C' } });
    const env = Object.fromEntries(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    expect(Object.keys(env).sort()).toEqual(['CALLER_VAR', 'HOME', 'LANG', 'PATH', 'PWD', 'SHLVL', 'TERM', '_']);
    expect(env).toMatchObject({
      CALLER_VAR: 'from caller',
      LANG: 'C',
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/tmp',
      TERM: 'dumb',
    });
  });

  it('refuses environment variable names that are not identifiers', () => {
    for (const name of ['BAD-NAME', '1ABC', 'A B', '', 'A=B']) {
      let refused: unknown;
      try {
        start('true', { isolation, env: { [name]: 'x' } });
      } catch (error) {
        refused = error;
      }
      expect(isToolError(refused) && refused.code).toBe('invalid_argument');
    }
  });

  it('runs in the requested cwd and refuses one that is not a directory', async () => {
    const workspaceDir = tempWorkspace();
    mkdirSync(join(workspaceDir, 'sub', 'dir'), { recursive: true });
    const result = await run('pwd; echo "$PWD"', { isolation, workspaceDir, cwd: 'sub/dir' });
    const expected = isolation === 'bwrap' ? '/workspace/sub/dir' : join(workspaceDir, 'sub', 'dir');
    expect(result.stdout).toBe(`${expected}\n${expected}\n`);
    expect(() => start('true', { isolation, workspaceDir, cwd: 'missing' })).toThrow(/not a directory/);
    expect(() => start('true', { isolation, workspaceDir, cwd: 'sub/../..' })).toThrow(/leaves the workspace/);
  });

  it('writes files the command creates into the workspace directory', async () => {
    const workspaceDir = tempWorkspace();
    mkdirSync(join(workspaceDir, 'src'));
    const result = await run(
      'echo made > made.txt; mkdir -p deep/er && printf nested > deep/er/file; cd .. && echo up > up.txt',
      {
        isolation,
        workspaceDir,
        cwd: 'src',
      },
    );
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(workspaceDir, 'src', 'made.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(workspaceDir, 'src', 'deep', 'er', 'file'), 'utf8')).toBe('nested');
    expect(readFileSync(join(workspaceDir, 'up.txt'), 'utf8')).toBe('up\n');
  });

  it('delivers 20 MB of output completely', async () => {
    const result = await run("head -c 20000000 /dev/zero | tr '\\0' x", { isolation });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(20_000_000);
    expect(/^x+$/.test(result.stdout)).toBe(true);
  });

  it('decodes multi-byte characters that straddle chunk boundaries', async () => {
    const result = await run("printf a; printf 'é€😀%.0s' {1..30000}", { isolation });
    expect(result.chunks.length).toBeGreaterThan(1);
    expect(result.chunks.some((chunk) => chunk.text.includes('\uFFFD'))).toBe(false);
    expect(result.stdout).toBe(`a${'é€😀'.repeat(30_000)}`);
  });

  it(`${isolation === 'bwrap' ? 'withholds' : 'cannot withhold'} the network by default`, async () => {
    const result = await run(`echo > /dev/tcp/127.0.0.1/${port} && echo connected`, { isolation });
    if (isolation === 'bwrap') {
      expect(result.exitCode).not.toBe(0);
      expect(result.stdout).toBe('');
    } else {
      expect(result).toMatchObject({ exitCode: 0, stdout: 'connected\n' });
    }
  });
});

describe('bubblewrap isolation', () => {
  beforeEach((context) => context.skip(bwrapSkipReason !== undefined, bwrapSkipReason));

  it('shares the network when asked', async () => {
    const result = await run(`echo > /dev/tcp/127.0.0.1/${port} && echo connected`, {
      isolation: 'bwrap',
      network: true,
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'connected\n' });
  });

  it('keeps the host read-only, hidden outside /usr and /etc essentials, with a private /tmp', async () => {
    const probe = [
      'touch /usr/toolgate-probe 2>/dev/null && echo usr-writable',
      'ls -A /tmp | wc -l',
      'echo private > /tmp/scratch && cat /tmp/scratch',
      'for p in /root /home /work /etc/ssl/private /etc/shadow; do test -e $p && echo visible:$p; done',
      'awk "BEGIN { print \\"awk works\\" }"',
      'id -un',
    ].join('; ');
    const result = await run(probe, { isolation: 'bwrap' });
    expect(result.stdout).toBe(`0\nprivate\nawk works\n${userInfo().username}\n`);
  });
});

describe('isolation detection', () => {
  it('finds bubblewrap exactly when it is installed, or only where TOOLGATE_BWRAP_PATH points', () => {
    const installed = ['/usr/bin', ...(process.env.PATH ?? '').split(':')].some(
      (dir) => dir !== '' && existsSync(join(dir, 'bwrap')),
    );
    expect(bubblewrapInstalled()).toBe(installed);
    expect(bubblewrapInstalled('/nonexistent/bwrap')).toBe(false);
  });

  it('refuses to run a command when bubblewrap is missing, naming what to install', () => {
    let refused: unknown;
    try {
      startCommand({
        workspaceDir: tempWorkspace(),
        cwd: '',
        command: 'true',
        env: {},
        bwrapPath: '/nonexistent/bwrap',
        onOutput: () => undefined,
      });
    } catch (error) {
      refused = error;
    }
    expect(isToolError(refused) && refused.code).toBe('unavailable');
    expect((refused as Error).message).toContain('apt-get install bubblewrap');
  });

  it('says at start-up when commands run without a sandbox, or would be refused', () => {
    expect(describeIsolation('process-group')).toMatch(/^TOOLGATE_SANDBOX=none: commands run WITHOUT a sandbox/);
    expect(describeIsolation('bwrap', true, '/nonexistent/bwrap')).toMatch(
      /^bubblewrap is not installed .*apt-get install bubblewrap/,
    );
    if (bwrapSkipReason === undefined) expect(describeIsolation('bwrap')).toMatch(/^commands run in bubblewrap/);
  });
});

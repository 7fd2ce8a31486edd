// Confining one command on this host: the user it runs as, one output stream or a terminal, and its memory, process and run-time limits.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handOver, type CommandUser } from '../../src/runner/node/command-user.ts';
import { createLayers, detectOverlay, removeLayers, type OverlayLayers } from '../../src/runner/node/overlay.ts';
import { detectLimitEnforcement, rlimitEnforcement } from '../../src/runner/node/resource-limits.ts';
import { bwrapSkipReason, isolationModes, removeWorkspaces, run, start, tempWorkspace } from './sandbox-fixtures.ts';
import { eventually } from '../support/eventually.ts';

const USER: CommandUser = { uid: 65534, gid: 65534 };
const rootSkipReason =
  bwrapSkipReason ?? (process.getuid?.() === 0 ? undefined : 'commands change user only when the runner runs as root');
const enforcement = detectLimitEnforcement();
const cgroupSkipReason =
  bwrapSkipReason ??
  (enforcement.kind === 'cgroup' ? undefined : `this host has no usable cgroups (${enforcement.kind})`);

const layersMade: OverlayLayers[] = [];
const scratch: string[] = [];
afterEach(async () => {
  for (const layers of layersMade.splice(0)) await removeLayers(layers);
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  removeWorkspaces();
});

async function userWorkspace(): Promise<string> {
  const workspaceDir = tempWorkspace();
  writeFileSync(join(workspaceDir, 'existing.txt'), 'from the runner\n');
  mkdirSync(join(workspaceDir, 'dir'));
  await handOver(workspaceDir, USER);
  return workspaceDir;
}

describe('a command of its own user (the runner is root)', () => {
  beforeEach((context) => context.skip(rootSkipReason !== undefined, rootSkipReason));

  it('runs as that user, without capabilities, and changes what the runner wrote', async () => {
    const workspaceDir = await userWorkspace();
    const command =
      'id -u; id -g; grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status; echo more >> existing.txt; echo new > dir/new.txt; echo tmp > /tmp/t && cat /tmp/t';
    const result = await run(command, { isolation: 'bwrap', workspaceDir, user: USER });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      '65534\n65534\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\ntmp\n',
    );
    expect(readFileSync(join(workspaceDir, 'existing.txt'), 'utf8')).toBe('from the runner\nmore\n');
    expect(statSync(join(workspaceDir, 'dir', 'new.txt')).uid).toBe(USER.uid);
    expect(readFileSync(join(workspaceDir, 'dir', 'new.txt'), 'utf8')).toBe('new\n');
  });

  it('hands a copy over without following a link out of it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'toolgate-outside-'));
    scratch.push(outside);
    writeFileSync(join(outside, 'secret'), 'root only');
    const workspaceDir = tempWorkspace();
    symlinkSync(join(outside, 'secret'), join(workspaceDir, 'link-to-file'));
    symlinkSync(outside, join(workspaceDir, 'link-to-dir'));
    await handOver(workspaceDir, USER);
    expect(statSync(join(outside, 'secret')).uid).toBe(0);
    expect(statSync(outside).uid).toBe(0);
    expect(lstatSync(join(workspaceDir, 'link-to-dir')).uid).toBe(USER.uid);
  });

  it('creates and changes files over an overlay as that user', async (context) => {
    const support = detectOverlay().support;
    context.skip(support?.kind !== 'root', 'no overlay can be mounted as root here');
    const workspaceDir = await userWorkspace();
    const parent = mkdtempSync(join(tmpdir(), 'toolgate-overlay-user-'));
    scratch.push(parent);
    const layers = (await createLayers(parent, workspaceDir))!;
    layersMade.push(layers);
    const result = await run('echo top > top.txt && echo more >> existing.txt && id -u', {
      isolation: 'bwrap',
      workspaceDir,
      user: USER,
      overlay: { support: support!, layers },
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: '65534\n', stderr: '' });
    expect(readFileSync(join(layers.upper, 'top.txt'), 'utf8')).toBe('top\n');
    expect(readFileSync(join(layers.upper, 'existing.txt'), 'utf8')).toBe('from the runner\nmore\n');
  });
});

describe.each(isolationModes)('output of a $isolation command', ({ isolation, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('keeps stdout and stderr apart by default, and shares one stream in write order when merged', async () => {
    const command = 'echo out; echo err 1>&2; echo out2';
    expect(await run(command, { isolation })).toMatchObject({ stdout: 'out\nout2\n', stderr: 'err\n' });
    expect(await run(command, { isolation, output: { kind: 'merged' } })).toMatchObject({
      stdout: 'out\nerr\nout2\n',
      stderr: '',
    });
  });

  it('runs on a pseudo-terminal of the asked size, echoing input and passing on the exit status', async () => {
    const result = await run('tty; stty size; echo "$TERM"; read line; echo "got $line"; exit 3', {
      isolation,
      output: { kind: 'terminal', size: { cols: 120, rows: 40 } },
      input: 'hello\n',
    });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toMatch(
      /^(hello\r\n)?\/dev\/pts\/\d+\r\n40 120\r\nxterm-256color\r\n(hello\r\n)?got hello\r\n$/,
    );
    const sized = await run('stty size', { isolation, output: { kind: 'terminal', size: { cols: 80, rows: 24 } } });
    expect(sized.stdout).toBe('24 80\r\n');
  });

  it('stops a terminal process as any other: its shell gets TERM and may clean up', async () => {
    const terminal = { kind: 'terminal', size: { cols: 120, rows: 40 } } as const;
    const plain = start('echo ready; sleep 100', { isolation, output: terminal });
    await plain.waitForOutput('ready');
    plain.command.stop(20_000);
    expect((await plain.command.exited).exitCode).toBe(143);
    const trapping = start("trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done", {
      isolation,
      output: terminal,
    });
    await trapping.waitForOutput('ready');
    trapping.command.stop(20_000);
    expect((await trapping.command.exited).exitCode).toBe(0);
    // bash reports on the terminal that its `sleep` died of the same TERM.
    expect(trapping.stdout()).toMatch(/^ready\r\n(.*Terminated.*\r\n)?bye\r\n$/);
  });

  it('stops a command that outlives its run time, and says so', async () => {
    const started = start("echo ready; trap 'echo stopping; exit 0' TERM; while true; do sleep 0.1; done", {
      isolation,
      maxRunMs: 1000,
    });
    await started.waitForOutput('ready');
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null, runLimitReached: true });
    expect(started.stdout()).toBe('ready\nstopping\n');
  });
});

describe('limits enforced with a cgroup per command', () => {
  beforeEach((context) => context.skip(cgroupSkipReason !== undefined, cgroupSkipReason));
  const limits = { limits: { memoryMb: 64, pids: 32, maxProcessMs: 60_000 }, enforcement };

  it('kills a command that allocates past its memory with 137', async () => {
    const result = await run('head -c 200m /dev/zero | tail', { isolation: 'bwrap', limits });
    expect(result.exitCode).toBe(137);
  });

  it('refuses processes past its limit', async () => {
    // dash gives up on a failed fork at once (bash retries for seconds).
    const result = await run("sh -c 'i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i + 1)); done; echo all started'", {
      isolation: 'bwrap',
      limits,
    });
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/fork/i);
    expect(result.exitCode).not.toBe(0);
  });

  it('puts the command in a cgroup of its own and removes it after', async () => {
    const started = start('echo ready; read line', { isolation: 'bwrap', limits });
    await started.waitForOutput('ready');
    // Its cgroup paths as the host shows them, under each cgroup mount (whose root is the hierarchy's here).
    const paths = readFileSync(`/proc/${started.command.pid}/cgroup`, 'utf8')
      .split('\n')
      .map((entry) => entry.slice(entry.indexOf(':', entry.indexOf(':') + 1) + 1))
      .filter((path) => /\/toolgate\/r\d+-\d+$/.test(path));
    expect(paths.length).toBeGreaterThan(0);
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .filter((entry) => entry.includes(' - cgroup'))
      .map((entry) => entry.split(' ')[4]!);
    const dirs = mounts.flatMap((mount) => paths.map((path) => join(mount, path))).filter((dir) => existsSync(dir));
    expect(dirs.length).toBeGreaterThan(0);
    started.command.endInput();
    await started.command.exited;
    await eventually(() => dirs.every((dir) => !existsSync(dir)), { what: 'every directory to be removed' });
  });
});

describe('limits enforced with rlimits where a host has no cgroups', () => {
  const rlimits = rlimitEnforcement('this test asks for rlimits');
  beforeEach((context) => context.skip(rlimits.kind !== 'rlimit', 'prlimit is not installed'));

  it.each(isolationModes)(
    'bounds data size and processes of a $isolation command',
    async ({ isolation, skipReason }) => {
      if (skipReason !== undefined) return;
      const result = await run('ulimit -d; ulimit -u; head -c 200m /dev/zero | tail', {
        isolation,
        limits: { limits: { memoryMb: 64, pids: 100, maxProcessMs: 60_000 }, enforcement: rlimits },
      });
      expect(result.stdout).toBe(`${64 * 1024}\n100\n`);
      expect(result.exitCode).not.toBe(0);
    },
  );
});

// Stopping and killing a command: graceful TERM, SIGKILL after the grace, and no process of the tree left behind.
import { existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bwrapSkipReason,
  hostProcessesRunning,
  isolationModes,
  removeWorkspaces,
  start,
  uniqueSleeps,
} from './sandbox-fixtures.ts';
import { eventually } from '../support/eventually.ts';

afterEach(removeWorkspaces);

const allGone = (commands: string[]) => () => commands.every((words) => hostProcessesRunning(words).length === 0);
const allRunning = (commands: string[]) => () => commands.every((words) => hostProcessesRunning(words).length > 0);

describe.each(isolationModes)('stopping a command with $isolation isolation', ({ isolation, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('lets a command that traps TERM finish cleanly within the grace', async () => {
    const started = start("trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done", { isolation });
    await started.waitForOutput('ready');
    expect(existsSync(`/proc/${started.command.pid}`)).toBe(true);
    started.command.stop(20_000);
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null });
    expect(started.stdout()).toBe('ready\nbye\n');
  });

  it('ends a command that does not trap TERM with 143', async () => {
    const started = start('echo ready; sleep 300', { isolation });
    await started.waitForOutput('ready');
    started.command.stop(20_000);
    expect((await started.command.exited).exitCode).toBe(143);
  });

  it('stops a command right after it starts', async () => {
    const started = start('sleep 300', { isolation });
    started.command.stop(20_000);
    expect((await started.command.exited).exitCode).toBe(143);
  });

  it('kills a tree that ignores TERM once the grace has passed, with 137', async () => {
    const sleeps = uniqueSleeps(3);
    const [orphan, session, foreground] = sleeps;
    const started = start(`trap '' TERM; (${orphan} &); setsid ${session} & echo ready; ${foreground}`, { isolation });
    await started.waitForOutput('ready');
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.stop(200);
    expect((await started.command.exited).exitCode).toBe(137);
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });

  it('kill leaves no process of the tree behind, setsid descendants included', async () => {
    const sleeps = uniqueSleeps(3);
    const [orphan, session, foreground] = sleeps;
    const started = start(`(${orphan} &); setsid ${session} & ${foreground}`, { isolation });
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.kill();
    expect(await started.command.exited).toMatchObject({ exitCode: 137 });
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });

  it("takes the command's background processes with it when the command ends", async () => {
    const sleeps = uniqueSleeps(3);
    const [background, session, doubleForked] = sleeps;
    const started = start(`${background} & setsid ${session} & (setsid ${doubleForked} &); read line; echo done`, {
      isolation,
    });
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.write('go\n');
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null });
    expect(started.stdout()).toBe('done\n');
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });
});

describe('stopping a command inside bubblewrap', () => {
  beforeEach((context) => context.skip(bwrapSkipReason !== undefined, bwrapSkipReason));

  it('also ends a daemon that left the session and closed its output', async () => {
    const sleeps = uniqueSleeps(1);
    const started = start(`(setsid ${sleeps[0]} >/dev/null 2>&1 </dev/null &); read line`, { isolation: 'bwrap' });
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.endInput();
    expect((await started.command.exited).exitCode).toBe(1);
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });
});

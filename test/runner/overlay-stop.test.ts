// Stopping and killing an exec that runs over an overlay: the same whole-tree ends as a command bound in place.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLayers, detectOverlay, removeLayers, type OverlayLayers } from '../../src/runner/node/overlay.ts';
import {
  bwrapSkipReason,
  hostProcessesRunning,
  removeWorkspaces,
  start,
  tempWorkspace,
  uniqueSleeps,
} from './sandbox-fixtures.ts';
import { eventually } from '../support/eventually.ts';

const skipReason =
  bwrapSkipReason ?? (existsSync('/usr/bin/getfattr') ? undefined : 'getfattr is not installed (the attr package)');
const support = skipReason === undefined ? detectOverlay().support : undefined;

const made: OverlayLayers[] = [];
const parents: string[] = [];
afterEach(async () => {
  for (const layers of made.splice(0)) await removeLayers(layers);
  for (const parent of parents.splice(0)) rmSync(parent, { recursive: true, force: true });
  removeWorkspaces();
});

async function startOver(command: string) {
  const workspaceDir = tempWorkspace();
  const parent = mkdtempSync(join(tmpdir(), 'toolgate-overlay-stop-'));
  parents.push(parent);
  const layers = (await createLayers(parent, workspaceDir))!;
  made.push(layers);
  return start(command, { isolation: 'bwrap', workspaceDir, overlay: { support: support!, layers } });
}

const allGone = (commands: string[]) => () => commands.every((words) => hostProcessesRunning(words).length === 0);
const allRunning = (commands: string[]) => () => commands.every((words) => hostProcessesRunning(words).length > 0);

describe('stopping an exec over an overlay', () => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('lets a command that traps TERM finish cleanly within the grace', async () => {
    const started = await startOver("trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done");
    await started.waitForOutput('ready');
    started.command.stop(20_000);
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null });
    expect(started.stdout()).toBe('ready\nbye\n');
  });

  it('stops a command right after it starts, while the overlay may still be mounting', async () => {
    const started = await startOver('sleep 300');
    started.command.stop(20_000);
    expect((await started.command.exited).exitCode).toBe(143);
  });

  it('kill leaves no process of the tree behind, setsid descendants included', async () => {
    const sleeps = uniqueSleeps(3);
    const [orphan, session, foreground] = sleeps;
    const started = await startOver(`(${orphan} &); setsid ${session} & ${foreground}`);
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.kill();
    expect(await started.command.exited).toMatchObject({ exitCode: 137 });
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });

  it("takes the command's background processes with it when the command ends", async () => {
    const sleeps = uniqueSleeps(2);
    const [background, session] = sleeps;
    const started = await startOver(`${background} & setsid ${session} & read line; echo done`);
    await eventually(allRunning(sleeps), { what: 'every sleep to run' });
    started.command.write('go\n');
    expect(await started.command.exited).toEqual({ exitCode: 0, signal: null });
    await eventually(allGone(sleeps), { what: 'every sleep to be gone' });
  });
});
